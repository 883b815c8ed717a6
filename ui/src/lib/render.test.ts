import { describe, expect, it } from "vitest";
import { POLICY, renderedAs, renderedDocument } from "./render";

function parse(html: string): Document {
  return new DOMParser().parseFromString(html, "text/html");
}

describe("rendered previews", () => {
  it("knows which files render", () => {
    expect(renderedAs("/r/notes.MD")).toBe("markdown");
    expect(renderedAs("/r/report.html")).toBe("html");
    expect(renderedAs("/r/page.htm")).toBe("html");
    expect(renderedAs("/r/data.csv")).toBeNull();
    expect(renderedAs("/r/README")).toBeNull();
  });

  it("renders Markdown as HTML under a policy that loads nothing", () => {
    const doc = parse(renderedDocument("# Sales\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n**bold** `code`", "markdown"));
    expect(doc.querySelector("h1")?.textContent).toBe("Sales");
    expect(doc.querySelectorAll("td")).toHaveLength(2);
    expect(doc.querySelector("strong")?.textContent).toBe("bold");
    const policy = doc.head.querySelector('meta[http-equiv="Content-Security-Policy"]');
    expect(policy?.getAttribute("content")).toBe(POLICY);
    // The policy is the first thing in the document, before anything it guards.
    expect(doc.head.firstElementChild).toBe(policy);
  });

  it("removes scripts, handlers, frames and remote pictures, and makes links inert", () => {
    const hostile = [
      "<html><head><meta http-equiv=\"refresh\" content=\"0;url=https://evil.example\">",
      "<base href=\"https://evil.example/\"><link rel=stylesheet href=\"https://evil.example/x.css\">",
      "<script>alert(1)</script></head><body>",
      "<h2 onclick=\"alert(2)\">Title</h2>",
      "<img src=\"https://evil.example/pixel.png\" onerror=\"alert(3)\" alt=\"remote\">",
      "<img src=\"data:image/png;base64,iVBORw0KGgo=\" alt=\"inline\">",
      "<iframe src=\"https://evil.example\"></iframe><object data=\"x.swf\"></object>",
      "<a href=\"javascript:alert(4)\">js</a> <a href=\"https://example.com/page\">site</a> <a href=\"#top\">top</a>",
      "<form action=\"https://evil.example\"><input name=q><button>Go</button></form>",
      "<svg><use href=\"https://evil.example/s.svg#a\"></use></svg>",
      "</body></html>",
    ].join("");
    const out = renderedDocument(hostile, "html");
    const doc = parse(out);
    expect(out).not.toMatch(/<script|onclick|onerror|alert\(|evil\.example\/pixel|<iframe|<object|<form|<base|refresh/i);
    expect(doc.querySelector("h2")?.textContent).toBe("Title");
    const images = [...doc.querySelectorAll("img")];
    expect(images.map((i) => [i.alt, i.getAttribute("src")?.slice(0, 5) ?? null])).toEqual([
      ["remote", null],
      ["inline", "data:"],
    ]);
    const links = [...doc.querySelectorAll("a")];
    expect(links.map((a) => [a.textContent, a.getAttribute("href"), a.getAttribute("title")])).toEqual([
      ["js", null, null],
      ["site", null, "https://example.com/page"],
      ["top", "#top", null],
    ]);
    expect(doc.querySelector("use")?.getAttribute("href") ?? null).toBeNull();
    expect(doc.querySelectorAll('meta[http-equiv="Content-Security-Policy"]')).toHaveLength(1);
  });

  it("renders empty and binary-looking text without failing", () => {
    expect(parse(renderedDocument("", "markdown")).body.textContent).toBe("");
    const garbage = "\u0000\u0001<<<>>>\uFFFD".repeat(100);
    expect(() => renderedDocument(garbage, "html")).not.toThrow();
  });
});
