"""A mockllama that keeps the mockllama headers of every reply it sent, for tests of real clients
(not every client exposes the reply headers it got)."""

from __future__ import annotations

from mockllama.app import create_app
from mockllama.server.app import SCENARIO_HEADER, TURN_HEADER
from mockllama.server.background import BackgroundServer
from support.recordings import SCENARIOS


class ObservedServer:
    """mockllama plus a log of the mockllama headers of every reply it sent."""

    def __init__(self):
        app = create_app(SCENARIOS)
        self.replies: list[dict] = []

        async def observe(request, response):
            if request.path.endswith(("/responses", "/completions")):
                self.replies.append(
                    {
                        "path": request.path,
                        "status": response.status,
                        "scenario": response.headers.get(SCENARIO_HEADER),
                        "turn": response.headers.get(TURN_HEADER),
                        "selected_by": response.headers.get("X-Mockllama-Selected-By"),
                    }
                )

        app.on_response_prepare.append(observe)
        self.background = BackgroundServer(app)

    def base_url(self, behaviour: str) -> str:
        return f"{self.background.url}/{behaviour}/v1"

    def scenarios(self) -> list[str]:
        return [reply["scenario"] for reply in self.replies]
