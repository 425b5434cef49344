// `npm run test:image`: the Containerfile built and run with buildah (test/image). Not part of
// `npm test`: it needs buildah and mmdebstrap (npm run test:tools installs them), root, and a few
// minutes for the build; .ci/run and the README's test command run it.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "image",
    root: fileURLToPath(new URL("../../", import.meta.url)),
    include: ["test/image/**/*.test.ts"],
    environment: "node",
    testTimeout: 120_000,
    hookTimeout: 1_200_000,
  },
});
