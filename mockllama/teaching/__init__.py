"""Teaching the failure mode: `mockllama explain`, the teaching page, and the generated client and
fault matrices."""
