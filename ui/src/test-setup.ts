import "@testing-library/jest-dom/vitest";
import { afterEach } from "vitest";
import { cleanup } from "@testing-library/svelte";
import { clearMocks } from "@tauri-apps/api/mocks";

// Unmount first: components stop listening while the mocked event plugin still exists.
afterEach(() => {
  cleanup();
  clearMocks();
});
