import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globalSetup: ["./mockllama.setup.ts"],
    include: ["*.test.ts"],
  },
});
