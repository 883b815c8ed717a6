// Markdown and HTML files rendered for the preview, safely: the document is cleaned by DOMPurify
// (no scripts, event handlers, frames or forms), every link is made inert and every picture that
// is not already inside the file (a `data:` URL) is dropped, and the result is shown in an iframe
// with `sandbox=""` (no scripts, popups, forms or navigation of the app) under its own Content
// Security Policy (nothing loads from anywhere). Three fences, each enough for scripts; the
// policy also stops a style sheet's `url(…)` from reaching the network.
import DOMPurify from "dompurify";
import { marked } from "marked";

/** File extensions rendered, and as what. */
const KINDS: Record<string, "markdown" | "html"> = { md: "markdown", markdown: "markdown", html: "html", htm: "html" };

export type Rendered = "markdown" | "html";

/** What `path` renders as, if it renders at all. */
export function renderedAs(path: string): Rendered | null {
  return KINDS[path.split(".").pop()?.toLowerCase() ?? ""] ?? null;
}

/** The policy the rendered document runs under. */
export const POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'";

const MARKDOWN_STYLE = `:root { color-scheme: light dark; font: 14px/1.5 system-ui, sans-serif; }
body { margin: 12px; overflow-wrap: anywhere; }
pre, code { font-family: ui-monospace, monospace; font-size: 13px; }
pre { padding: 8px; border: 1px solid #8884; border-radius: 6px; overflow: auto; }
table { border-collapse: collapse; } td, th { border: 1px solid #8886; padding: 2px 6px; }
img { max-width: 100%; }
a[title] { text-decoration: underline dotted; cursor: help; }`;

/** Attributes that fetch something when they are not a `data:` URL. */
const FETCHING = ["src", "srcset", "poster", "background", "xlink:href"];

/** The document to put in the sandboxed iframe's `srcdoc`. */
export function renderedDocument(text: string, kind: Rendered): string {
  const source = kind === "markdown" ? (marked.parse(text, { async: false, gfm: true }) as string) : text;
  const root = DOMPurify.sanitize(source, {
    WHOLE_DOCUMENT: true,
    RETURN_DOM: true,
    FORBID_TAGS: ["form", "input", "button", "textarea", "select", "base", "meta", "link"],
  }) as HTMLElement;
  const doc = root.ownerDocument;
  for (const a of root.querySelectorAll("[href]")) {
    // Inert: hovering shows where it points; clicking goes nowhere.
    const href = a.getAttribute("href") ?? "";
    if (!href.startsWith("#")) {
      a.setAttribute("title", href);
      a.removeAttribute("href");
    }
  }
  for (const el of root.querySelectorAll("*")) {
    for (const name of FETCHING) {
      const value = el.getAttribute(name);
      if (value != null && !value.trim().toLowerCase().startsWith("data:")) el.removeAttribute(name);
    }
  }
  let head = root.querySelector("head");
  if (!head) {
    head = doc.createElement("head");
    root.prepend(head);
  }
  const policy = doc.createElement("meta");
  policy.setAttribute("http-equiv", "Content-Security-Policy");
  policy.setAttribute("content", POLICY);
  head.prepend(policy);
  if (kind === "markdown") {
    const style = doc.createElement("style");
    style.textContent = MARKDOWN_STYLE;
    head.append(style);
  }
  return `<!doctype html>${root.outerHTML}`;
}
