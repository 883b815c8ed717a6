//! The engine's floors (written at the top of `src/lib.rs`) hold: every `crate::` path in the
//! engine's code names a module on its own floor or below, and no top-level modules import each
//! other in a circle. Test code is left out (it may reach anywhere). The source is read as text,
//! with comments, strings and `#[cfg(test)]` items taken out first.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What one file imports: (top-level module, where in the file) per `crate::` path.
type Uses = Vec<(String, usize)>;

#[test]
fn imports_never_climb_and_never_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let floors = floors(&lib);
    let declared = declared_modules(&lib);
    let on_no_floor: Vec<_> = declared
        .iter()
        .filter(|m| !floors.contains_key(*m))
        .collect();
    assert!(
        on_no_floor.is_empty(),
        "modules on no floor (add them to the list at the top of lib.rs): {on_no_floor:?}"
    );
    let gone: Vec<_> = floors.keys().filter(|m| !declared.contains(*m)).collect();
    assert!(
        gone.is_empty(),
        "floors name modules lib.rs does not declare: {gone:?}"
    );
    let reexports = reexports(&lib);

    let mut climbs = Vec::new();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in sources(&src) {
        let relative = file.strip_prefix(&src).unwrap().to_path_buf();
        let Some(module) = top_module(&relative) else {
            continue;
        };
        let text = code_only(&std::fs::read_to_string(&file).unwrap());
        for (target, at) in uses(&text, &relative) {
            let target = reexports.get(&target).cloned().unwrap_or(target);
            if target == module {
                continue;
            }
            let Some(&to) = floors.get(&target) else {
                climbs.push(format!(
                    "{}: `crate::{target}` is neither a module nor a re-export of lib.rs",
                    relative.display()
                ));
                continue;
            };
            let from = floors[&module];
            if to > from {
                let line = text[..at].lines().count();
                climbs.push(format!(
                    "{}:{line}: `{module}` (floor {from}) imports `{target}` (floor {to})",
                    relative.display()
                ));
            }
            graph.entry(module.clone()).or_default().insert(target);
        }
    }
    assert!(
        climbs.is_empty(),
        "imports that climb (move the shared part down, or hand it in from above):\n{}",
        climbs.join("\n")
    );
    let circles = circles(&graph);
    assert!(circles.is_empty(), "modules in a circle: {circles:?}");
    // The reading must see the imports that are there: one known arrow per floor pair.
    assert!(graph["server"].contains("engine") && graph["files"].contains("objects"));
}

/// Module → floor, from the numbered list under `# Floors` in lib.rs's doc comment.
fn floors(lib: &str) -> BTreeMap<String, usize> {
    let mut floors = BTreeMap::new();
    let mut floor = None;
    for line in lib.lines().take_while(|l| l.starts_with("//!")) {
        let line = line.trim_start_matches("//!").trim();
        if let Some((n, _)) = line.split_once(". ")
            && let Ok(n) = n.parse::<usize>()
        {
            floor = Some(n);
        } else if line.is_empty() || !line.starts_with('`') {
            floor = None;
        }
        if let Some(n) = floor {
            let names = line.split_once(':').map_or(line, |(_, names)| names);
            for name in names.split('`').skip(1).step_by(2) {
                assert!(
                    floors.insert(name.to_owned(), n).is_none(),
                    "`{name}` is on two floors"
                );
            }
        }
    }
    assert!(floors.len() > 10, "no floors read from lib.rs: {floors:?}");
    floors
}

/// The top-level modules lib.rs declares.
fn declared_modules(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.strip_prefix("mod ")?.strip_suffix(';').map(str::to_owned)
        })
        .collect()
}

/// Names lib.rs re-exports (`pub use engine::{Engine, ...};`) → the module they come from.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(rest) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        for name in names.trim_matches(|c| c == '{' || c == '}').split(',') {
            let name = name.trim();
            let name = name.rsplit(" as ").next().unwrap_or(name).trim();
            if !name.is_empty() {
                map.insert(name.to_owned(), module.trim().to_owned());
            }
        }
    }
    map
}

/// Every `.rs` file under `dir` that is not test code (`tests.rs`, a `tests/` folder).
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" {
                out.extend(sources(&path));
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
    out
}

/// The top-level module a file belongs to (`None` for lib.rs).
fn top_module(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_string_lossy();
    let first = first.strip_suffix(".rs").unwrap_or(&first);
    (first != "lib").then(|| first.to_owned())
}

/// The module path of a file: `a/b.rs` and `a/b/mod.rs` are `[a, b]`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The top-level modules a file's code names: `crate::x`, `crate::{x, y::z}`, and `super::`
/// chains that reach the crate root (from the file's module and the inline `mod x { }` blocks
/// around them).
fn uses(code: &str, relative: &Path) -> Uses {
    let depth = module_path(relative).len();
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    // For each open brace: whether it opens an inline module.
    let mut braces: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !is_ident(bytes[i - 1]);
        if bytes[i] == b'{' {
            braces.push(opens_module(&code[..i]));
            i += 1;
        } else if bytes[i] == b'}' {
            braces.pop();
            i += 1;
        } else if starts_word && code[i..].starts_with("crate::") && !code[..i].ends_with('$') {
            found.extend(group(code, i + "crate::".len()));
            i += "crate::".len();
        } else if starts_word && code[i..].starts_with("super::") {
            let mut j = i;
            let mut supers = 0;
            while code[j..].starts_with("super::") {
                supers += 1;
                j += "super::".len();
            }
            if supers >= depth + braces.iter().filter(|m| **m).count() {
                found.extend(group(code, j));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    found
}

/// Whether the code before a `{` ends with `mod <name>`.
fn opens_module(before: &str) -> bool {
    let mut words = before.split_whitespace().rev();
    let name = words.next().unwrap_or("");
    words.next() == Some("mod") && name.bytes().all(is_ident)
}

/// The first segments of the path (or `{...}` group of paths) that starts at `at`.
fn group(code: &str, at: usize) -> Uses {
    let rest = &code[at..];
    if let Some(inner) = rest.strip_prefix('{') {
        // Split the group's top level on commas; each item's first segment is a module.
        let mut out = Vec::new();
        let (mut depth, mut start) = (0usize, 0usize);
        for (k, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    out.extend(first_segment(&inner[start..k], at + 1 + start));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.extend(first_segment(&inner[start..k], at + 1 + start));
                    start = k + 1;
                }
                _ => {}
            }
        }
        out
    } else {
        first_segment(rest, at).into_iter().collect()
    }
}

fn first_segment(path: &str, at: usize) -> Option<(String, usize)> {
    let path = path.trim_start();
    let end = path
        .bytes()
        .position(|b| !is_ident(b))
        .unwrap_or(path.len());
    let name = &path[..end];
    (!name.is_empty() && name != "self").then(|| (name.to_owned(), at))
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `text` with comments, string and char literals blanked and `#[cfg(test)]` items removed
/// (offsets of what stays are kept, for line numbers).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if b[i] == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !is_ident(b[i - 1]))
        {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let body = i + 2 + hashes;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| body + p + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), or a lifetime ('a) left alone.
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|p| i + 2 + p + 1)
            } else {
                let len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 2 + len)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    let mut code = String::from_utf8(out).expect("blanking keeps UTF-8 boundaries");
    while let Some(at) = code.find("#[cfg(test)]") {
        let end = item_end(&code, at + "#[cfg(test)]".len());
        let blanked: String = code[at..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        code.replace_range(at..end, &blanked);
    }
    code
}

/// Where the item starting after `from` ends: its `;`, or its balanced `{...}`.
fn item_end(code: &str, from: usize) -> usize {
    let b = code.as_bytes();
    let mut i = from;
    while i < b.len() && b[i] != b';' && b[i] != b'{' {
        i += 1;
    }
    if i >= b.len() || b[i] == b';' {
        return (i + 1).min(b.len());
    }
    let mut depth = 0;
    while i < b.len() {
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// The strongly connected groups of more than one module (Tarjan's algorithm).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(targets) = s.graph.get(v) {
            for w in targets {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                group.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.out.push(group);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The shells reach the engine through a small surface: a module is public only when a shell
/// needs it, and the rest of what they name is re-exported from those.
#[test]
fn few_modules_are_public() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("lib.rs");
    let public: Vec<_> = lib.lines().filter(|l| l.starts_with("pub mod ")).collect();
    assert!(
        public.len() <= 12,
        "{} public modules (at most 12): {public:?}",
        public.len()
    );
}

#[test]
fn the_reader_finds_paths_in_groups_and_skips_comments_strings_and_tests() {
    let code = code_only(
        "use crate::{a::X, b::{Y, Z}, Engine};\n// crate::c\nlet s = \"crate::d\";\n\
         let r = r#\"crate::e\"#;\nfn f<'x>(c: char) { crate::g::h(); let q = '\"'; }\n\
         #[cfg(test)]\nmod tests { use crate::i; }\n",
    );
    let names: Vec<_> = uses(&code, Path::new("m.rs"))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["a", "b", "Engine", "g"]);
    let nested = uses("use super::super::k::L;", Path::new("m/n/o.rs"));
    assert!(nested.is_empty(), "two supers from m::n::o stay in m");
    let up = uses("use super::super::k::L;", Path::new("m/n.rs"));
    assert_eq!(up[0].0, "k");
    let inline = uses("mod unix { use super::{P, Q}; }", Path::new("m.rs"));
    assert!(inline.is_empty(), "super in an inline module stays in m");
}

#[test]
fn circles_are_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(circles(&graph), vec![vec!["a", "b", "c"]]);
}
