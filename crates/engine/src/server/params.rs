//! What several tools' parameters share: an object argument a model may send as JSON text, and
//! a value's kind named in errors. Each tool's parameters live in its module (`tools/`), as a
//! type whose JSON Schema is the input schema, so the schema a model reads and the parser that
//! checks its call cannot drift; unknown fields are refused (-32602), not silently ignored.

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// Accepts an object, or a string holding a JSON object (models often send that), or null.
pub(in crate::server) fn object_or_json_text<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Map<String, Value>>, D::Error> {
    use serde::de::Error;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
            Ok(Value::Object(m)) => Ok(Some(m)),
            _ => Err(D::Error::custom(
                "tool_args must be a JSON object (got a string that is not a JSON object)",
            )),
        },
        Some(other) => Err(D::Error::custom(format!(
            "tool_args must be a JSON object, not {}",
            kind(&other)
        ))),
    }
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
