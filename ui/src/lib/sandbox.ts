// A stdio server's `sandbox` entry as the Servers screen shows it and its editor edits it.

import type { ServerSpec } from "./types";

export type Sandbox = ServerSpec["sandbox"];
type Policy = Exclude<Sandbox, "off" | null>;

/** What the editor's confinement fields hold. */
export interface SandboxFields {
  confined: boolean;
  network: "off" | "allow" | "all";
  /** Hosts, one a line. */
  allow: string;
  /** Paths, one a line. */
  read: string;
  write: string;
}

const lines = (list: string[] | undefined) => (list ?? []).join("\n");
const listOf = (text: string) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

export function fieldsOf(sandbox: Sandbox): SandboxFields {
  if (sandbox === "off") return { confined: false, network: "off", allow: "", read: "", write: "" };
  const network = sandbox?.network;
  return {
    confined: true,
    network: network === "all" ? "all" : typeof network === "object" ? "allow" : "off",
    allow: typeof network === "object" ? lines(network.allow) : "",
    read: lines(sandbox?.read),
    write: lines(sandbox?.write),
  };
}

/** The entry the fields say; what the editor does not show (`env`, limits) kept from `start`.
 * Defaults stay unwritten: a confined server with nothing added is `null`. */
export function sandboxOf(fields: SandboxFields, start: Sandbox): Sandbox {
  if (!fields.confined) return "off";
  const kept: Policy = start && start !== "off" ? { ...start } : {};
  delete kept.network;
  delete kept.read;
  delete kept.write;
  const next: Policy = { ...kept };
  if (fields.network === "all") next.network = "all";
  if (fields.network === "allow") next.network = { allow: listOf(fields.allow) };
  const read = listOf(fields.read);
  const write = listOf(fields.write);
  if (read.length) next.read = read;
  if (write.length) next.write = write;
  return Object.keys(next).length ? next : null;
}

/** How a server's confinement reads on the Servers screen. */
export function confinementOf(spec: ServerSpec): { text: string; open: boolean; unconfined: boolean } | null {
  if (spec.transport !== "stdio") return null;
  const sandbox = spec.sandbox;
  if (sandbox === "off") return { text: "Unconfined: it runs with your full rights", open: true, unconfined: true };
  const network = sandbox?.network;
  const files = "Confined to your allowed folders and its own";
  if (network === "all") return { text: `${files} · network open`, open: true, unconfined: false };
  if (typeof network === "object") {
    const hosts = network.allow.length ? network.allow.join(", ") : "none";
    return { text: `${files} · network: ${hosts}`, open: false, unconfined: false };
  }
  return { text: `${files} · no network`, open: false, unconfined: false };
}

/** `spec` with its network closed (the rest of its sandbox kept). */
export function closedNetwork(spec: ServerSpec): ServerSpec {
  const sandbox = spec.sandbox && spec.sandbox !== "off" ? { ...spec.sandbox } : {};
  delete sandbox.network;
  return { ...spec, sandbox: Object.keys(sandbox).length ? sandbox : null };
}
