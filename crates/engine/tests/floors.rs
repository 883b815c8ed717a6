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

/// Inside any folder of the engine, the formats and query crates and the app's shell, no files
/// import each other in a circle: a path from a file (or from anything in a folder) to another
/// file or folder beside it, or to a name its folder's module re-exports from there, is an
/// arrow, and no arrows come back round.
#[test]
fn no_files_circle_inside_a_folder() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let mut arrows = 0;
    for src in [
        "src",
        "../formats/src",
        "../query/src",
        "../../src-tauri/src",
    ] {
        let src = manifest.join(src);
        let graph = file_arrows(&src);
        arrows += graph.values().map(BTreeSet::len).sum::<usize>();
        found.extend(circles(&graph).into_iter().map(|circle| {
            let name = src
                .strip_prefix(manifest)
                .unwrap_or(&src)
                .display()
                .to_string();
            // Each room of the circle, with the rooms of it that it imports.
            let arrows: Vec<String> = circle
                .iter()
                .map(|from| {
                    let to: Vec<&str> = graph[from]
                        .iter()
                        .filter(|to| circle.contains(to))
                        .map(String::as_str)
                        .collect();
                    format!("{from} -> {}", to.join(", "))
                })
                .collect();
            format!("{name}: {}", arrows.join("; "))
        }));
    }
    assert!(
        found.is_empty(),
        "files in a circle (move what both need into a file below them):\n{}",
        found.join("\n")
    );
    // The reading must see the arrows that are there.
    assert!(arrows > 100, "only {arrows} arrows between files were read");
}

/// The arrows between the rooms of each folder under `src` (its files and its folders), by
/// module path (`a::b`): a path from anything in one room into another room of the folder.
fn file_arrows(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = BTreeMap::new();
    for file in sources(src) {
        let relative = file.strip_prefix(src).unwrap().to_path_buf();
        let text = std::fs::read_to_string(&file).unwrap();
        files.insert(module_path(&relative), read(&text, &relative));
    }
    let exported: BTreeMap<Vec<String>, Vec<String>> = files
        .values()
        .flat_map(|r| r.exported.iter().cloned())
        .collect();
    // A path → the file it lands in, through the re-exports on its way.
    let land = |mut path: Vec<String>| -> Option<Vec<String>> {
        for _ in 0..8 {
            let file = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| files.contains_key(p))?;
            match path
                .get(file.len())
                .and_then(|next| exported.get(&[&file[..], std::slice::from_ref(next)].concat()))
            {
                Some(to) if !to.starts_with(&path[..=file.len()]) => {
                    path = [&to[..], &path[file.len() + 1..]].concat();
                }
                _ => return Some(file),
            }
        }
        None
    };
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (here, reader) in &files {
        for path in &reader.found {
            let Some(target) = land(path.clone()) else {
                continue;
            };
            // In each folder above the file: the room the file is in (itself or a folder) →
            // the room of that folder the target is in.
            for depth in 0..here.len() {
                let folder = &here[..depth];
                if target.len() > depth
                    && target.starts_with(folder)
                    && target[depth] != here[depth]
                {
                    graph
                        .entry(here[..=depth].join("::"))
                        .or_default()
                        .insert(target[..=depth].join("::"));
                }
            }
        }
    }
    graph
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

/// The module path of a file: `a/b.rs` and `a/b/mod.rs` are `[a, b]`; `lib.rs` and `main.rs`
/// are the crate's root, `[]`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod")
        || (parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main"))
    {
        parts.pop();
    }
    parts
}

/// The top-level modules a file's code names, each once, other than its own: `crate::x` paths
/// (in code, `use` trees and macro bodies) and `super::` chains that reach the crate root, read
/// with `syn`; `#[cfg(test)]` items are left out.
fn uses(code: &str, relative: &Path) -> Vec<String> {
    let own = module_path(relative).into_iter().next();
    let mut seen = BTreeSet::new();
    paths(code, relative)
        .into_iter()
        .filter_map(|path| path.into_iter().next())
        .filter(|top| Some(top) != own.as_ref() && seen.insert(top.clone()))
        .collect()
}

/// Every path a file's code names from the crate's root (`crate::`, `self::` and `super::`
/// paths made whole), in the order met; `#[cfg(test)]` items are left out.
fn paths(code: &str, relative: &Path) -> Vec<Vec<String>> {
    read(code, relative).found
}

/// A file read with `syn`: the paths it names and the names it re-exports.
fn read(code: &str, relative: &Path) -> Reader {
    let file = syn::parse_file(code)
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", relative.display()));
    let mut reader = Reader {
        here: module_path(relative),
        found: Vec::new(),
        exported: Vec::new(),
    };
    reader.visit_file(&file);
    reader
}

/// Walks a file from the module it is (`here`, inline modules pushed on it), noting the paths
/// it names and the names it re-exports (`pub use`: the name's path → the path it stands for).
struct Reader {
    here: Vec<String>,
    found: Vec<Vec<String>>,
    exported: Vec<(Vec<String>, Vec<String>)>,
}

impl Reader {
    /// A path made whole from the root, if it starts at `crate`, `self` or `super`.
    fn whole<'a>(&self, mut segments: impl Iterator<Item = &'a syn::Ident>) -> Option<Vec<String>> {
        let first = segments.next()?;
        let mut path = if first == "crate" {
            Vec::new()
        } else if first == "self" {
            self.here.clone()
        } else if first == "super" {
            let mut path = self.here.clone();
            path.pop()?;
            let mut rest = segments.by_ref().peekable();
            while rest.next_if(|s| *s == "super").is_some() {
                path.pop()?;
            }
            path.extend(rest.map(ToString::to_string));
            return Some(path);
        } else {
            return None;
        };
        path.extend(segments.map(ToString::to_string));
        Some(path)
    }

    fn note<'a>(&mut self, segments: impl Iterator<Item = &'a syn::Ident>) {
        if let Some(path) = self.whole(segments)
            && !path.is_empty()
        {
            self.found.push(path);
        }
    }

    /// Each path a `use` tree names, below `prefix`; a public one's names are noted as
    /// re-exported (a first segment that is no root keyword is read as a module declared here).
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<syn::Ident>, public: bool) {
        let name = |reader: &mut Self, ident: &syn::Ident, alias: &syn::Ident| {
            let path: Vec<&syn::Ident> = prefix.iter().chain([ident]).collect();
            reader.note(path.iter().copied());
            if public {
                let whole = reader.whole(path.iter().copied()).unwrap_or_else(|| {
                    let mut here = reader.here.clone();
                    here.extend(path.iter().map(ToString::to_string));
                    here
                });
                let mut exported = reader.here.clone();
                exported.push(alias.to_string());
                reader.exported.push((exported, whole));
            }
        };
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.clone());
                self.use_tree(&p.tree, prefix, public);
                prefix.pop();
            }
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(item, prefix, public);
                }
            }
            syn::UseTree::Name(n) => name(self, &n.ident, &n.ident),
            syn::UseTree::Rename(r) => name(self, &r.ident, &r.rename),
            syn::UseTree::Glob(_) => self.note(prefix.iter()),
        }
    }

    /// `crate :: x`, `self :: x` and `super :: ...` inside a macro's tokens (`format!`, `json!`, ...).
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        let tokens: Vec<_> = tokens.into_iter().collect();
        for (i, token) in tokens.iter().enumerate() {
            match token {
                proc_macro2::TokenTree::Group(g) => self.tokens(g.stream()),
                proc_macro2::TokenTree::Ident(id)
                    if id == "crate" || id == "super" || id == "self" =>
                {
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
        self.here.push(m.ident.to_string());
        visit::visit_item_mod(self, m);
        self.here.pop();
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let public = !matches!(u.vis, syn::Visibility::Inherited);
        self.use_tree(&u.tree, &mut Vec::new(), public);
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
