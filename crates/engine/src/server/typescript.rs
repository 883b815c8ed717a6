//! An upstream tool as a script calls it: a TypeScript declaration written from its input and
//! output schemas (`list_tool_details` gives it), so a model writing `run_script` code knows
//! the arguments and what the Promise resolves to. The output is the value a script gets: the
//! Python SDK's lone `result` wrapper taken off, as `run_script` takes it off.

use rmcp::model::Tool;
use serde_json::{Map, Value};

/// Nesting deeper than this is `unknown` (and so are `$ref` cycles).
const DEPTH: usize = 8;
/// A declaration longer than this says `unknown` for what it leaves out.
const MOST: usize = 6_000;

/// `tools.<server>.<tool>(args: {...}): Promise<...>`, with the tool's description above it.
pub fn declaration(server: &str, tool: &Tool) -> String {
    let input = Value::Object((*tool.input_schema).clone());
    let output = tool
        .output_schema
        .as_deref()
        .map(|o| unwrapped(Value::Object(o.clone())));
    let defs = |schema: &Value| {
        schema
            .get("$defs")
            .or_else(|| schema.get("definitions"))
            .cloned()
    };
    let args = Writer::new(defs(&input)).ts(&input, 0);
    let answer = output.map_or_else(|| "unknown".to_owned(), |o| Writer::new(defs(&o)).ts(&o, 0));
    let mut out = String::new();
    if let Some(d) = tool.description.as_deref().filter(|d| !d.trim().is_empty()) {
        out.push_str(&comment(d, ""));
    }
    out.push_str(&format!(
        "{}(args: {args}): Promise<{answer}>;",
        path(server, &tool.name)
    ));
    out
}

/// How a script names the tool: `tools.server.tool`, or with brackets for other names.
fn path(server: &str, tool: &str) -> String {
    let part = |name: &str| {
        if is_identifier(name) {
            format!(".{name}")
        } else {
            format!("[{}]", Value::String(name.to_owned()))
        }
    };
    format!("tools{}{}", part(server), part(tool))
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// An output schema of `{result: X}` alone (the Python SDK's wrapper) as X's.
fn unwrapped(schema: Value) -> Value {
    let properties = schema.get("properties").and_then(Value::as_object);
    match properties {
        Some(p) if p.len() == 1 && p.contains_key("result") => {
            let mut inner = p["result"].clone();
            if let (Some(defs), Value::Object(o)) = (schema.get("$defs"), &mut inner) {
                o.insert("$defs".into(), defs.clone());
            }
            inner
        }
        _ => schema,
    }
}

fn comment(text: &str, indent: &str) -> String {
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = offload_formats::clip::clip(&text, 300).replace("*/", "* /");
    format!("{indent}/** {text} */\n")
}

struct Writer {
    defs: Option<Value>,
}

impl Writer {
    fn new(defs: Option<Value>) -> Self {
        Writer { defs }
    }

    fn ts(&self, schema: &Value, depth: usize) -> String {
        let written = self.write(schema, depth);
        if written.len() > MOST {
            "unknown".to_owned()
        } else {
            written
        }
    }

    fn write(&self, schema: &Value, depth: usize) -> String {
        if depth > DEPTH {
            return "unknown".into();
        }
        let Value::Object(s) = schema else {
            // `true` or a missing schema: anything.
            return "unknown".into();
        };
        if let Some(reference) = s.get("$ref").and_then(Value::as_str) {
            let name = reference.rsplit('/').next().unwrap_or_default();
            return match self.defs.as_ref().and_then(|d| d.get(name)) {
                Some(target) => self.write(target, depth + 1),
                None => "unknown".into(),
            };
        }
        if let Some(value) = s.get("const") {
            return value.to_string();
        }
        if let Some(Value::Array(values)) = s.get("enum") {
            return union(values.iter().map(Value::to_string).collect());
        }
        for (key, joint) in [("anyOf", " | "), ("oneOf", " | "), ("allOf", " & ")] {
            if let Some(Value::Array(parts)) = s.get(key) {
                let parts: Vec<String> = parts.iter().map(|p| self.write(p, depth + 1)).collect();
                return if joint == " | " {
                    union(parts)
                } else {
                    format!("({})", parts.join(joint))
                };
            }
        }
        match s.get("type") {
            Some(Value::String(t)) => self.of_type(t, s, depth),
            Some(Value::Array(types)) => union(
                types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|t| self.of_type(t, s, depth))
                    .collect(),
            ),
            _ if s.contains_key("properties") => self.object(s, depth),
            _ => "unknown".into(),
        }
    }

    fn of_type(&self, t: &str, s: &Map<String, Value>, depth: usize) -> String {
        match t {
            "string" => "string".into(),
            "number" | "integer" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" => match s.get("items") {
                Some(items) => {
                    let item = self.write(items, depth + 1);
                    if item.contains(' ') {
                        format!("Array<{item}>")
                    } else {
                        format!("{item}[]")
                    }
                }
                None => "unknown[]".into(),
            },
            "object" => self.object(s, depth),
            _ => "unknown".into(),
        }
    }

    fn object(&self, s: &Map<String, Value>, depth: usize) -> String {
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let properties = s.get("properties").and_then(Value::as_object);
        let mut fields = Vec::new();
        for (name, property) in properties.into_iter().flatten() {
            let key = if is_identifier(name) {
                name.clone()
            } else {
                Value::String(name.clone()).to_string()
            };
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            let note = property
                .get("description")
                .and_then(Value::as_str)
                .map(|d| comment(d, "").trim_end().to_owned() + " ")
                .unwrap_or_default();
            fields.push(format!(
                "{note}{key}{optional}: {}",
                self.write(property, depth + 1)
            ));
        }
        match s.get("additionalProperties") {
            Some(Value::Object(extra)) => {
                fields.push(format!(
                    "[key: string]: {}",
                    self.write(&Value::Object(extra.clone()), depth + 1)
                ));
            }
            None | Some(Value::Bool(true)) if fields.is_empty() => {
                return "Record<string, unknown>".into();
            }
            _ => {}
        }
        if fields.is_empty() {
            return "{}".into();
        }
        format!("{{ {} }}", fields.join("; "))
    }
}

fn union(mut parts: Vec<String>) -> String {
    parts.dedup();
    if parts.len() == 1 {
        return parts.remove(0);
    }
    parts.join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(name: &str, input: Value, output: Option<Value>) -> Tool {
        let mut t = Tool::new(
            name.to_owned(),
            "One order by its id.",
            Arc::new(input.as_object().unwrap().clone()),
        );
        t.output_schema = output.map(|o| Arc::new(o.as_object().unwrap().clone()));
        t
    }

    #[test]
    fn a_tool_reads_as_a_typescript_declaration() {
        let t = tool(
            "get_order",
            json!({"type": "object", "properties": {
                "id": {"type": "integer", "description": "The order's id."},
                "fields": {"type": "array", "items": {"type": "string", "enum": ["qty", "price"]}},
                "since": {"type": ["string", "null"]}
            }, "required": ["id"]}),
            // The Python SDK's wrapper, with a $ref into its $defs.
            Some(
                json!({"type": "object", "properties": {"result": {"$ref": "#/$defs/Order"}},
                "required": ["result"],
                "$defs": {"Order": {"type": "object", "properties": {
                    "id": {"type": "integer"}, "lines": {"type": "array", "items": {"type": "object",
                        "properties": {"sku": {"type": "string"}, "n": {"type": "number"}}, "required": ["sku"]}}
                }, "required": ["id"]}}}),
            ),
        );
        assert_eq!(
            declaration("shop", &t),
            "/** One order by its id. */\n\
             tools.shop.get_order(args: { /** The order's id. */ id: number; fields?: Array<\"qty\" | \"price\">; since?: string | null }): \
             Promise<{ id: number; lines?: Array<{ sku: string; n?: number }> }>;"
        );
    }

    #[test]
    fn odd_names_cycles_and_missing_schemas_stay_valid() {
        let t = tool(
            "get-order",
            json!({"type": "object", "properties": {"a b": {"$ref": "#/$defs/Node"}},
                   "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}}),
            None,
        );
        let d = declaration("my server", &t);
        assert!(d.starts_with("/** One order by its id. */\ntools[\"my server\"][\"get-order\"](args: { \"a b\"?: { next?: { next?:"), "{d}");
        assert!(d.ends_with("Promise<unknown>;"), "{d}");
        assert!(d.contains("unknown"), "the cycle ends: {d}");
        let empty = tool(
            "ping",
            json!({"type": "object"}),
            Some(json!({"type": "object", "additionalProperties": {"type": "number"}})),
        );
        assert_eq!(
            declaration("s", &empty),
            "/** One order by its id. */\ntools.s.ping(args: Record<string, unknown>): Promise<{ [key: string]: number }>;"
        );
    }
}
