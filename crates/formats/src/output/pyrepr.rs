//! Python literals as data: some MCP servers answer `str(rows)` — `[{'id': 1, 'name': 'Ann',
//! 'note': None}]` (mcp-server-sqlite's `read_query`, among others). This reads the literal
//! subset such answers use (lists, tuples, dicts with string keys, strings in either quote
//! with Python's escapes, ints, floats, `True`/`False`/`None`) into JSON. Anything else —
//! `datetime(...)`, bytes, sets, `nan` — is not data we can represent exactly: the text stays
//! text. It never evaluates anything and its nesting is bounded.

use serde_json::{Map, Number, Value};

const MAX_DEPTH: usize = 128;

/// The value of a Python literal, or `None` when `text` is not one we read exactly.
pub fn parse(text: &str) -> Option<Value> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

/// A list of dicts (the table-shaped answers worth reading), from a Python literal.
pub fn parse_rows(text: &str) -> Option<Value> {
    let t = text.trim_start();
    if !(t.starts_with("[{") || t.starts_with("[ {") || t.starts_with("({")) {
        return None;
    }
    match parse(text)? {
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            Some(Value::Array(items))
        }
        _ => None,
    }
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match *self.s.get(self.i)? {
            b'[' => self.sequence(b']', depth).map(Value::Array),
            b'(' => self.sequence(b')', depth).map(Value::Array),
            b'{' => self.dict(depth),
            b'\'' | b'"' => self.string().map(Value::String),
            b'-' | b'+' | b'0'..=b'9' | b'.' => self.number(),
            _ => self.word(),
        }
    }

    fn sequence(&mut self, close: u8, depth: usize) -> Option<Vec<Value>> {
        self.i += 1;
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Some(items);
            }
            items.push(self.value(depth + 1)?);
            if !self.eat(b',') {
                return self.eat(close).then_some(items);
            }
        }
    }

    fn dict(&mut self, depth: usize) -> Option<Value> {
        self.i += 1;
        let mut map = Map::new();
        loop {
            if self.eat(b'}') {
                return Some(Value::Object(map));
            }
            self.ws();
            let key = match self.value(depth + 1)? {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            if !self.eat(b':') {
                return None;
            }
            let value = self.value(depth + 1)?;
            map.insert(key, value);
            if !self.eat(b',') {
                return self.eat(b'}').then(|| Value::Object(map));
            }
        }
    }

    fn word(&mut self) -> Option<Value> {
        let rest = &self.text[self.i..];
        for (word, value) in [
            ("None", Value::Null),
            ("True", Value::Bool(true)),
            ("False", Value::Bool(false)),
        ] {
            if rest.starts_with(word)
                && !rest[word.len()..]
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
            {
                self.i += word.len();
                return Some(value);
            }
        }
        None
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        while self.i < self.s.len()
            && matches!(
                self.s[self.i],
                b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' | b'_'
            )
        {
            self.i += 1;
        }
        let raw: String = self.text[start..self.i]
            .chars()
            .filter(|c| *c != '_')
            .collect();
        let raw = raw.strip_prefix('+').unwrap_or(&raw);
        if let Ok(n) = raw.parse::<i64>() {
            return Some(Value::Number(n.into()));
        }
        if let Ok(n) = raw.parse::<u64>() {
            return Some(Value::Number(n.into()));
        }
        let is_int = raw.bytes().all(|b| b.is_ascii_digit() || b == b'-');
        if is_int {
            // An integer beyond 64 bits: kept exact, as a string of its digits.
            return (raw.len() > 1
                && raw
                    .trim_start_matches('-')
                    .bytes()
                    .all(|b| b.is_ascii_digit()))
            .then(|| Value::String(raw.to_owned()));
        }
        raw.parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .and_then(Number::from_f64)
            .map(Value::Number)
    }

    fn string(&mut self) -> Option<String> {
        let quote = self.s[self.i];
        self.i += 1;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.i..];
            let stop = rest.find([quote as char, '\\', '\n'])?;
            out.push_str(&rest[..stop]);
            self.i += stop;
            match self.s[self.i] {
                b'\n' => return None,
                b'\\' => {
                    self.i += 1;
                    self.escape(&mut out)?;
                }
                _ => {
                    self.i += 1;
                    return Some(out);
                }
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Option<()> {
        let c = *self.s.get(self.i)?;
        self.i += 1;
        let simple = match c {
            b'\\' => Some('\\'),
            b'\'' => Some('\''),
            b'"' => Some('"'),
            b'n' => Some('\n'),
            b't' => Some('\t'),
            b'r' => Some('\r'),
            b'0' => Some('\0'),
            b'a' => Some('\u{7}'),
            b'b' => Some('\u{8}'),
            b'f' => Some('\u{c}'),
            b'v' => Some('\u{b}'),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            return Some(());
        }
        let digits = match c {
            b'x' => 2,
            b'u' => 4,
            b'U' => 8,
            _ => return None,
        };
        let hex = self.text.get(self.i..self.i + digits)?;
        let code = u32::from_str_radix(hex, 16).ok()?;
        out.push(char::from_u32(code)?);
        self.i += digits;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_python_prints_for_rows() {
        let text = r#"[{'id': 1, 'name': "O'Brien", 'score': 2.5, 'ok': True, 'note': None, 'tags': ('a', 'b'), 'big': 123456789012345678901234567890}, {'id': -2, 'name': 'tab\there \\ \'q\' \u00e9\x41', 'score': 1e3, 'ok': False, 'note': {}, 'tags': [], 'big': 0}]"#;
        let v = parse_rows(text).unwrap();
        assert_eq!(v[0]["name"], "O'Brien");
        assert_eq!(v[0]["tags"], json!(["a", "b"]));
        assert_eq!(v[0]["note"], Value::Null);
        assert_eq!(
            v[0]["big"], "123456789012345678901234567890",
            "exact, as text"
        );
        assert_eq!(v[1]["name"], "tab\there \\ 'q' \u{e9}A");
        assert_eq!(v[1]["score"], json!(1000.0));
        assert_eq!(v[1]["ok"], false);
    }

    #[test]
    fn anything_not_exactly_data_stays_text() {
        for text in [
            "[{'when': datetime.date(2024, 1, 1)}]",
            "[{'b': b'bytes'}]",
            "[{'x': nan}]",
            "[{'x': 1}",
            "[{'x': 1}] trailing",
            "[{'x': 'unterminated}]",
            "[{'x': 'new\nline'}]",
            "[{'x': {1, 2}}]",
            "[1, 2, 3]",
            "[]",
            "not python at all",
            "[{'x': Nonesuch}]",
            "[{'x': '\\q'}]",
        ] {
            assert_eq!(parse_rows(text), None, "{text}");
        }
        let deep = "[{'a': ".to_owned() + &"[".repeat(500) + &"]".repeat(500) + "}]";
        assert_eq!(parse_rows(&deep), None);
    }
}
