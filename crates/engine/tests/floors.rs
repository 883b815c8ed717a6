//! The engine's floors (written at the top of `src/lib.rs`) hold: every `crate::` path in the
//! engine's code names a module on its own floor or below, and no top-level modules import each
//! other in a circle. Test code is left out (it may reach anywhere). Each file is read with `syn`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::{self, Visit};

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
        let text = std::fs::read_to_string(&file).unwrap();
        for target in uses(&text, &relative) {
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
                climbs.push(format!(
                    "{}: `{module}` (floor {from}) imports `{target}` (floor {to})",
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
    assert!(graph["server"].contains("engine") && graph["roots"].contains("objects"));
}

/// The formats crate, below every floor, knows nothing of MCP, the engine, roots or the runtime:
/// its manifest names none of them.
#[test]
fn the_formats_crate_stands_on_its_own() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../formats/Cargo.toml");
    let manifest = std::fs::read_to_string(manifest).expect("crates/formats/Cargo.toml");
    let deps: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.split_once(['.', ' ', '=']).map(|(d, _)| d))
        .collect();
    for above in [
        "rmcp",
        "offload-engine",
        "tokio",
        "object_store",
        "offload-wire",
    ] {
        assert!(!deps.contains(&above), "crates/formats depends on {above}");
    }
    assert!(
        deps.contains(&"calamine"),
        "the manifest was read: {deps:?}"
    );
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
        // `pub use crate::...` inside an inline module (`fuzzing`) re-exports nothing new.
        if matches!(module.trim(), "crate" | "super" | "self") {
            continue;
        }
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

/// The top-level modules a file's code names, each once: `crate::x` paths (in code, `use` trees and macro
/// bodies) and `super::` chains that reach the crate root, read with `syn`; `#[cfg(test)]`
/// items are left out.
fn uses(code: &str, relative: &Path) -> Vec<String> {
    let file = syn::parse_file(code)
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", relative.display()));
    let mut reader = Reader {
        depth: module_path(relative).len(),
        found: Vec::new(),
    };
    reader.visit_file(&file);
    let mut seen = BTreeSet::new();
    reader.found.retain(|m| seen.insert(m.clone()));
    reader.found
}

/// Walks a file, `depth` modules below the crate root, noting the modules its paths name.
struct Reader {
    depth: usize,
    found: Vec<String>,
}

impl Reader {
    /// The module a path's segments lead to from the root, if they start there.
    fn note<'a>(&mut self, mut segments: impl Iterator<Item = &'a syn::Ident>) {
        let Some(first) = segments.next() else { return };
        if first == "crate" {
            self.found.extend(segments.next().map(ToString::to_string));
            return;
        }
        let mut supers = 0;
        let mut next = Some(first);
        while next.is_some_and(|s| s == "super") {
            supers += 1;
            next = segments.next();
        }
        if supers > 0 && supers >= self.depth {
            self.found.extend(next.map(ToString::to_string));
        }
    }

    /// Each path a `use` tree names, as far as its first segments below `prefix`.
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<syn::Ident>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.clone());
                self.use_tree(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(item, prefix);
                }
            }
            syn::UseTree::Name(n) => self.note(prefix.iter().chain([&n.ident])),
            syn::UseTree::Rename(r) => self.note(prefix.iter().chain([&r.ident])),
            syn::UseTree::Glob(_) => self.note(prefix.iter()),
        }
    }

    /// `crate :: x` and `super :: ...` inside a macro's tokens (`format!`, `json!`, ...).
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let tokens: Vec<_> = tokens.into_iter().collect();
        for (i, token) in tokens.iter().enumerate() {
            match token {
                proc_macro2::TokenTree::Group(g) => self.tokens(g.stream()),
                proc_macro2::TokenTree::Ident(id) if id == "crate" || id == "super" => {
                    let starts = i == 0
                        || !matches!(&tokens[i - 1], proc_macro2::TokenTree::Punct(p) if p.as_char() == ':');
                    if !starts {
                        continue;
                    }
                    // The path's identifiers, each after a `::`.
                    let mut path = vec![id.clone()];
                    let mut j = i + 1;
                    while let (
                        Some(proc_macro2::TokenTree::Punct(a)),
                        Some(proc_macro2::TokenTree::Punct(b)),
                        Some(proc_macro2::TokenTree::Ident(next)),
                    ) = (tokens.get(j), tokens.get(j + 1), tokens.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        path.push(next.clone());
                        j += 3;
                    }
                    if path.len() > 1 {
                        self.note(path.iter());
                    }
                }
                _ => {}
            }
        }
    }
}

/// Whether an item is compiled for tests only.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

impl<'ast> Visit<'ast> for Reader {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            _ => return visit::visit_item(self, item),
        };
        if !test_only(attrs) {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !test_only(&f.attrs) {
            visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.depth += 1;
        visit::visit_item_mod(self, m);
        self.depth -= 1;
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&u.tree, &mut Vec::new());
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.note(path.segments.iter().map(|s| &s.ident));
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        visit::visit_macro(self, m);
    }
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
fn the_reader_finds_paths_in_groups_and_macros_and_skips_comments_strings_and_tests() {
    let code = "use crate::{a::X, b::{Y, Z}, Engine};\n// crate::c\nconst S: &str = \"crate::d\";\n\
                fn f<'x>(c: char) { crate::g::h(); let q = '\"'; tracing::info!(\"{}\", crate::k::l()); }\n\
                #[cfg(test)]\nmod tests { use crate::i; }\n";
    assert_eq!(
        uses(code, Path::new("m.rs")),
        ["a", "b", "Engine", "g", "k"]
    );
    let nested = uses("use super::super::k::L;", Path::new("m/n/o.rs"));
    assert!(nested.is_empty(), "two supers from m::n::o stay in m");
    assert_eq!(uses("use super::super::k::L;", Path::new("m/n.rs")), ["k"]);
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
