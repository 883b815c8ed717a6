import "@testing-library/jest-dom/vitest";
import { afterEach } from "vitest";
import { cleanup } from "@testing-library/svelte";
import { clearMocks } from "@tauri-apps/api/mocks";

// Unmount first: components stop listening while the mocked event plugin still exists.
afterEach(() => {
  cleanup();
  clearMocks();
});

// jsdom has no layout, so no ResizeObserver (Svelte's bind:clientHeight uses it); a no-op one
// lets components mount, and lists fall back to their default height.
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
} as unknown as typeof ResizeObserver;

// jsdom draws nothing: a canvas has no context (charts then draw nothing, their tables remain),
// without jsdom's "not implemented" noise.
HTMLCanvasElement.prototype.getContext = (() => null) as unknown as HTMLCanvasElement["getContext"];
