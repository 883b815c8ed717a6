//! A client's configuration file as a document that can be read and changed in place: JSON
//! and JSONC through a concrete syntax tree (comments, key order, indentation and everything
//! else survive), TOML through `toml_edit`. Entries are exchanged in the `mcpServers` shape
//! Offload itself uses; each client's own shape is converted here.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::{Map, Value, json};
use toml_edit::{DocumentMut, Item, Table};

/// How a client writes its server entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `{key: {name: {command, args, env, ...}}}` in JSON; `typed` clients want
    /// `"type": "stdio"` on stdio entries.
    Standard { key: &'static str, typed: bool },
    /// opencode: `{"mcp": {name: {"type": "local", "command": [cmd, ...args], "environment"}}}`.
    Opencode,
    /// Codex CLI: `[mcp_servers.NAME]` tables in TOML.
    Codex,
}

pub enum Document {
    Json(CstRootNode),
    Toml(DocumentMut),
}

impl Document {
    /// Parses `text` (empty text is an empty document).
    pub fn parse(shape: Shape, text: &str) -> Result<Self, String> {
        if shape == Shape::Codex {
            return text
                .parse::<DocumentMut>()
                .map(Self::Toml)
                .map_err(|e| e.to_string());
        }
        let root = CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| e.to_string())?;
        if root.value().is_some_and(|v| v.as_object().is_none()) {
            return Err("the file does not hold a JSON object".into());
        }
        Ok(Self::Json(root))
    }

    pub fn render(&self) -> String {
        match self {
            Self::Json(root) => root.to_string(),
            Self::Toml(doc) => doc.to_string(),
        }
    }

    /// The server entries, in Offload's shape, in file order.
    pub fn entries(&self, shape: Shape) -> Vec<(String, Value)> {
        match (self, shape) {
            (Self::Toml(doc), _) => doc
                .get("mcp_servers")
                .and_then(Item::as_table_like)
                .map(|t| {
                    t.iter()
                        .map(|(name, item)| (name.to_owned(), from_codex(&item_json(item))))
                        .collect()
                })
                .unwrap_or_default(),
            (Self::Json(root), shape) => {
                let key = json_key(shape);
                let Some(servers) = root.object_value().and_then(|o| o.object_value(key)) else {
                    return Vec::new();
                };
                servers
                    .properties()
                    .into_iter()
                    .filter_map(|p| {
                        let name = p.name()?.decoded_value().ok()?;
                        let value = p.value()?.to_serde_value()?;
                        Some((name, from_client(shape, value)))
                    })
                    .collect()
            }
        }
    }

    /// Adds or replaces entry `name` (given in Offload's shape).
    pub fn put(&mut self, shape: Shape, name: &str, entry: &Value) {
        match self {
            Self::Toml(doc) => {
                let servers = doc.entry("mcp_servers").or_insert_with(|| {
                    let mut t = Table::new();
                    t.set_implicit(true);
                    Item::Table(t)
                });
                if let Some(servers) = servers.as_table_like_mut() {
                    servers.insert(name, Item::Table(to_codex(entry)));
                }
            }
            Self::Json(root) => {
                let servers = servers_object(root, json_key(shape));
                let value = input(&to_client(shape, entry));
                match servers.get(name) {
                    Some(prop) => prop.set_value(value),
                    None => {
                        servers.append(name, value);
                    }
                }
            }
        }
    }

    /// Removes entry `name`; answers whether it was there.
    pub fn remove(&mut self, shape: Shape, name: &str) -> bool {
        match self {
            Self::Toml(doc) => doc
                .get_mut("mcp_servers")
                .and_then(Item::as_table_like_mut)
                .and_then(|t| t.remove(name))
                .is_some(),
            Self::Json(root) => {
                let prop = root
                    .object_value()
                    .and_then(|o| o.object_value(json_key(shape)))
                    .and_then(|s| s.get(name));
                prop.map(|p| p.remove()).is_some()
            }
        }
    }
}

fn json_key(shape: Shape) -> &'static str {
    match shape {
        Shape::Standard { key, .. } => key,
        Shape::Opencode => "mcp",
        Shape::Codex => "mcp_servers",
    }
}

fn servers_object(root: &CstRootNode, key: &str) -> CstObject {
    let top = root.object_value_or_set();
    top.object_value_or_set(key)
}

/// A JSON value as the syntax tree's input.
fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// A client's entry in Offload's shape.
fn from_client(shape: Shape, value: Value) -> Value {
    match shape {
        Shape::Opencode => {
            let mut out = Map::new();
            if value["type"] == "remote" {
                out.insert("type".into(), json!("http"));
                copy(&value, "url", &mut out, "url");
                copy(&value, "headers", &mut out, "headers");
            } else if let Some(parts) = value["command"].as_array() {
                if let Some(cmd) = parts.first() {
                    out.insert("command".into(), cmd.clone());
                }
                out.insert(
                    "args".into(),
                    Value::Array(parts.iter().skip(1).cloned().collect()),
                );
                copy(&value, "environment", &mut out, "env");
            }
            if value["enabled"] == false {
                out.insert("disabled".into(), json!(true));
            }
            Value::Object(out)
        }
        // Zed's older form: {"command": {"path", "args", "env"}, "settings": {}}.
        Shape::Standard { .. } if value["command"].is_object() => {
            let c = &value["command"];
            let mut out = Map::new();
            copy(c, "path", &mut out, "command");
            copy(c, "args", &mut out, "args");
            copy(c, "env", &mut out, "env");
            Value::Object(out)
        }
        _ => value,
    }
}

/// Offload's shape as the client writes it.
fn to_client(shape: Shape, entry: &Value) -> Value {
    match shape {
        Shape::Opencode => {
            let mut command = vec![entry["command"].clone()];
            command.extend(entry["args"].as_array().cloned().unwrap_or_default());
            let mut out = json!({"type": "local", "command": command});
            if let Some(env) = entry
                .get("env")
                .filter(|e| e.as_object().is_some_and(|o| !o.is_empty()))
            {
                out["environment"] = env.clone();
            }
            out
        }
        Shape::Standard { typed: true, .. } => {
            let mut out = Map::new();
            out.insert("type".into(), json!("stdio"));
            if let Some(o) = entry.as_object() {
                out.extend(o.clone());
            }
            Value::Object(out)
        }
        _ => entry.clone(),
    }
}

fn copy(from: &Value, key: &str, to: &mut Map<String, Value>, as_key: &str) {
    if let Some(v) = from.get(key).filter(|v| !v.is_null()) {
        to.insert(as_key.into(), v.clone());
    }
}

fn from_codex(value: &Value) -> Value {
    let mut out = Map::new();
    for (from, to) in [
        ("command", "command"),
        ("args", "args"),
        ("env", "env"),
        ("cwd", "cwd"),
        ("url", "url"),
        ("http_headers", "headers"),
    ] {
        copy(value, from, &mut out, to);
    }
    if out.contains_key("url") {
        out.insert("type".into(), json!("http"));
    }
    if value["enabled"] == false {
        out.insert("disabled".into(), json!(true));
    }
    Value::Object(out)
}

fn to_codex(entry: &Value) -> Table {
    let mut t = Table::new();
    if let Some(cmd) = entry["command"].as_str() {
        t.insert("command", toml_edit::value(cmd));
    }
    let args: toml_edit::Array = entry["args"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    t.insert("args", toml_edit::value(args));
    if let Some(env) = entry["env"].as_object().filter(|e| !e.is_empty()) {
        let mut table = toml_edit::InlineTable::new();
        for (k, v) in env {
            table.insert(k, v.as_str().unwrap_or_default().into());
        }
        t.insert("env", toml_edit::value(table));
    }
    t
}

/// A TOML item as JSON (strings, numbers, booleans, arrays, tables).
fn item_json(item: &Item) -> Value {
    match item {
        Item::Value(v) => value_json(v),
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_owned(), item_json(v)))
                .collect(),
        ),
        Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| {
                    Value::Object(
                        t.iter()
                            .map(|(k, v)| (k.to_owned(), item_json(v)))
                            .collect(),
                    )
                })
                .collect(),
        ),
        Item::None => Value::Null,
    }
}

fn value_json(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as V;
    match v {
        V::String(s) => json!(s.value()),
        V::Integer(i) => json!(i.value()),
        V::Float(f) => json!(f.value()),
        V::Boolean(b) => json!(b.value()),
        V::Datetime(d) => json!(d.value().to_string()),
        V::Array(a) => Value::Array(a.iter().map(value_json).collect()),
        V::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_owned(), value_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CURSOR: Shape = Shape::Standard {
        key: "mcpServers",
        typed: false,
    };
    const VSCODE: Shape = Shape::Standard {
        key: "servers",
        typed: true,
    };

    #[test]
    fn jsonc_keeps_comments_order_and_other_keys() {
        let text = "{\n  // my settings\n  \"theme\": \"dark\", /* inline */\n  \"context_servers\": {\n    \"git\": {\"command\": \"uvx\", \"args\": [\"mcp-server-git\"]},\n  },\n  \"vim_mode\": true\n}\n";
        let zed = Shape::Standard {
            key: "context_servers",
            typed: false,
        };
        let mut doc = Document::parse(zed, text).unwrap();
        assert_eq!(doc.entries(zed)[0].1["command"], "uvx");
        doc.put(
            zed,
            "offload",
            &json!({"command": "/usr/bin/offload", "args": ["mcp"]}),
        );
        let out = doc.render();
        for kept in [
            "// my settings",
            "/* inline */",
            "\"theme\": \"dark\"",
            "\"vim_mode\": true",
            "mcp-server-git",
        ] {
            assert!(out.contains(kept), "{kept} lost:\n{out}");
        }
        let again = Document::parse(zed, &out).unwrap();
        let names: Vec<_> = again.entries(zed).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["git", "offload"]);
        let mut again = again;
        assert!(again.remove(zed, "offload"));
        assert!(!again.remove(zed, "offload"));
        assert!(again.render().contains("// my settings"));
    }

    #[test]
    fn an_entry_is_replaced_in_place_and_typed_clients_get_a_type() {
        let text = "{\"servers\": {\"a\": {\"type\": \"stdio\", \"command\": \"x\"}, \"offload\": {\"command\": \"old\"}, \"z\": {\"type\": \"http\", \"url\": \"https://h/mcp\"}}}";
        let mut doc = Document::parse(VSCODE, text).unwrap();
        doc.put(
            VSCODE,
            "offload",
            &json!({"command": "/bin/offload", "args": ["mcp"]}),
        );
        let entries = doc.entries(VSCODE);
        let names: Vec<_> = entries.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a", "offload", "z"]);
        assert_eq!(
            entries[1].1,
            json!({"type": "stdio", "command": "/bin/offload", "args": ["mcp"]})
        );
    }

    #[test]
    fn empty_and_missing_keys_are_created_and_non_objects_refused() {
        let mut doc = Document::parse(CURSOR, "").unwrap();
        doc.put(CURSOR, "offload", &json!({"command": "o", "args": ["mcp"]}));
        let v: Value = serde_json::from_str(&doc.render()).unwrap();
        assert_eq!(v["mcpServers"]["offload"]["args"], json!(["mcp"]));
        assert!(Document::parse(CURSOR, "[1, 2]").is_err());
        assert!(Document::parse(CURSOR, "{\"a\": ").is_err());
    }

    #[test]
    fn opencode_and_codex_shapes_convert_both_ways() {
        let text = r#"{"$schema": "https://opencode.ai/config.json", "mcp": {"fs": {"type": "local", "command": ["npx", "-y", "fs"], "environment": {"K": "v"}, "enabled": false}, "r": {"type": "remote", "url": "https://r/mcp"}}}"#;
        let mut doc = Document::parse(Shape::Opencode, text).unwrap();
        let e = doc.entries(Shape::Opencode);
        assert_eq!(
            e[0].1,
            json!({"command": "npx", "args": ["-y", "fs"], "env": {"K": "v"}, "disabled": true})
        );
        assert_eq!(e[1].1, json!({"type": "http", "url": "https://r/mcp"}));
        doc.put(
            Shape::Opencode,
            "offload",
            &json!({"command": "/o", "args": ["mcp"]}),
        );
        let v: Value = serde_json::from_str(&doc.render()).unwrap();
        assert_eq!(
            v["mcp"]["offload"],
            json!({"type": "local", "command": ["/o", "mcp"]})
        );
        assert_eq!(v["$schema"], "https://opencode.ai/config.json");

        let toml = "# codex\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", \"docs\"]\nenv = { TOKEN = \"t\" }\n\n[mcp_servers.web]\nurl = \"https://w/mcp\"\nhttp_headers = { Authorization = \"Bearer x\" }\n";
        let mut doc = Document::parse(Shape::Codex, toml).unwrap();
        let e = doc.entries(Shape::Codex);
        assert_eq!(
            e[0].1,
            json!({"command": "npx", "args": ["-y", "docs"], "env": {"TOKEN": "t"}})
        );
        assert_eq!(
            e[1].1,
            json!({"url": "https://w/mcp", "headers": {"Authorization": "Bearer x"}, "type": "http"})
        );
        doc.put(
            Shape::Codex,
            "offload",
            &json!({"command": "/o", "args": ["mcp"]}),
        );
        let out = doc.render();
        assert!(out.starts_with("# codex\nmodel = \"o3\""), "{out}");
        assert!(
            out.contains("[mcp_servers.offload]\ncommand = \"/o\"\nargs = [\"mcp\"]"),
            "{out}"
        );
        let mut again = Document::parse(Shape::Codex, &out).unwrap();
        assert!(again.remove(Shape::Codex, "docs"));
        assert!(!again.render().contains("[mcp_servers.docs]"));
    }

    #[test]
    fn zeds_older_command_object_is_read() {
        let zed = Shape::Standard {
            key: "context_servers",
            typed: false,
        };
        let doc = Document::parse(zed, r#"{"context_servers": {"g": {"command": {"path": "uvx", "args": ["g"], "env": {}}, "settings": {}}}}"#).unwrap();
        assert_eq!(
            doc.entries(zed)[0].1,
            json!({"command": "uvx", "args": ["g"], "env": {}})
        );
    }
}
