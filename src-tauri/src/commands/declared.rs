//! The commands are declared once, in Rust: this reads every `#[tauri::command]` function in
//! `src-tauri/src/commands/` and writes `ui/src/lib/commands.ts`, the map of each command's
//! arguments (as the window sends them: camelCase) and answer that the window's `backend.ts`
//! and its tests' typed mock (`ui/src/lib/mock.ts`) are written against. A test fails when the
//! file is stale (`OFFLOAD_UPDATE_TYPES=1 cargo test -p offload-app types` rewrites it), or
//! when `handler()` and the functions disagree.

use std::path::Path;

use syn::{FnArg, GenericArgument, Item, PathArguments, ReturnType, Type};

/// Where the generated map lives, from the repository root.
pub const PATH: &str = "ui/src/lib/commands.ts";

/// One command: its name, its arguments (name as sent, TypeScript type, optional) and answer.
struct Command {
    name: String,
    args: Vec<(String, String, bool)>,
    answer: String,
}

/// Every `#[tauri::command]` function of the files in `dir`, in file order.
fn commands(dir: &Path) -> Vec<Command> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the commands directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a command file");
        let parsed = syn::parse_file(&text).expect("a command file parses");
        for item in parsed.items {
            let Item::Fn(f) = item else { continue };
            let is_command = f.attrs.iter().any(|a| {
                let segments: Vec<_> = a
                    .path()
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                segments == ["tauri", "command"]
            });
            if !is_command {
                continue;
            }
            let args = f
                .sig
                .inputs
                .iter()
                .filter_map(|input| match input {
                    FnArg::Typed(t) => Some(t),
                    FnArg::Receiver(_) => None,
                })
                .filter(|t| !injected(&t.ty))
                .map(|t| {
                    let name = match &*t.pat {
                        syn::Pat::Ident(i) => camel(&i.ident.to_string()),
                        _ => panic!("{}: an argument that is not a plain name", f.sig.ident),
                    };
                    let optional = outer(&t.ty).is_some_and(|(n, _)| n == "Option");
                    (name, typescript(&t.ty), optional)
                })
                .collect();
            let answer = match &f.sig.output {
                ReturnType::Default => "null".to_owned(),
                ReturnType::Type(_, ty) => match outer(ty) {
                    Some((n, args)) if n == "Result" => typescript(args[0]),
                    _ => typescript(ty),
                },
            };
            out.push(Command {
                name: f.sig.ident.to_string(),
                args,
                answer,
            });
        }
    }
    out
}

/// Arguments Tauri fills in itself (the app's state, its handle, the window).
fn injected(ty: &Type) -> bool {
    outer(ty).is_some_and(|(n, _)| {
        matches!(
            n.as_str(),
            "State" | "AppHandle" | "Window" | "WebviewWindow"
        )
    })
}

/// A path type's last segment and its type arguments.
fn outer(ty: &Type) -> Option<(String, Vec<&Type>)> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let args = match &last.arguments {
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|a| match a {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Some((last.ident.to_string(), args))
}

/// The TypeScript of a Rust type as serde sends it (integers as numbers, as `types.ts` has them).
fn typescript(ty: &Type) -> String {
    if let Type::Tuple(t) = ty
        && t.elems.is_empty()
    {
        return "null".into();
    }
    let Some((name, args)) = outer(ty) else {
        panic!("a type the generator does not know: {}", quote(ty));
    };
    match (name.as_str(), args.as_slice()) {
        ("String" | "PathBuf", []) => "string".into(),
        ("bool", []) => "boolean".into(),
        ("u8" | "u16" | "u32" | "u64" | "usize" | "i32" | "i64" | "f64", []) => "number".into(),
        ("Option", [inner]) => format!("{} | null", typescript(inner)),
        ("Vec", [inner]) => match typescript(inner) {
            plain if plain.chars().all(|c| c.is_alphanumeric()) => format!("{plain}[]"),
            union => format!("({union})[]"),
        },
        (named, []) => named.to_owned(),
        _ => panic!("a type the generator does not know: {}", quote(ty)),
    }
}

fn quote(ty: &Type) -> String {
    let mut s = String::new();
    if let Type::Path(p) = ty {
        for seg in &p.path.segments {
            s.push_str(&seg.ident.to_string());
            s.push_str("::");
        }
    }
    s
}

/// `remove_from_client` → `removeFromClient`: Tauri's names for arguments on the JS side.
fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The whole generated file; `known` are the types `types.ts` declares.
fn generate(commands: &[Command], known: &[String]) -> String {
    let mut used: Vec<&str> = Vec::new();
    let mut lines = Vec::new();
    for c in commands {
        let mut types: Vec<&str> = c.args.iter().map(|(_, t, _)| t.as_str()).collect();
        types.push(&c.answer);
        for t in types {
            for word in t
                .split(|ch: char| !ch.is_alphanumeric())
                .filter(|w| !w.is_empty())
            {
                if word.starts_with(char::is_uppercase) {
                    assert!(
                        known.iter().any(|k| k == word),
                        "command {}: {word} is not declared in types.ts (add it in types.rs)",
                        c.name
                    );
                    if !used.contains(&word) {
                        used.push(word);
                    }
                }
            }
        }
        let args = if c.args.is_empty() {
            "Record<string, never>".to_owned()
        } else {
            let fields: Vec<String> = c
                .args
                .iter()
                .map(|(n, t, optional)| format!("{n}{}: {t}", if *optional { "?" } else { "" }))
                .collect();
            format!("{{ {} }}", fields.join("; "))
        };
        lines.push(format!(
            "  {}: {{ args: {args}; answer: {} }};",
            c.name, c.answer
        ));
    }
    used.sort_unstable();
    format!(
        "// Generated from the #[tauri::command] functions in src-tauri/src/commands by\n\
         // src-tauri/src/commands/declared.rs. Do not edit by hand: run\n\
         // `OFFLOAD_UPDATE_TYPES=1 cargo test -p offload-app types`.\n\
         import type {{ {} }} from \"./types\";\n\n\
         /** Every command the app answers: its arguments, as the window sends them, and its answer. */\n\
         export interface Commands {{\n{}\n}}\n",
        used.join(", "),
        lines.join("\n")
    )
}

/// The command names `handler()` registers.
fn registered(mod_rs: &str) -> Vec<String> {
    let start = mod_rs
        .find("generate_handler![")
        .expect("handler() uses generate_handler!");
    let body = &mod_rs[start + "generate_handler![".len()..];
    let body = &body[..body.find(']').expect("the list closes")];
    body.split(',')
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| s.rsplit("::").next().unwrap_or(s).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn the_command_types_are_up_to_date_and_every_command_is_registered() {
        let dir = root().join("src-tauri/src/commands");
        let found = commands(&dir);
        let mut names: Vec<_> = found.iter().map(|c| c.name.clone()).collect();
        let mut listed = registered(&std::fs::read_to_string(dir.join("mod.rs")).unwrap());
        names.sort();
        listed.sort();
        assert_eq!(
            names, listed,
            "handler() must register every #[tauri::command]"
        );

        let types = crate::types::declarations();
        let known: Vec<String> = types
            .lines()
            .filter_map(|l| l.strip_prefix("export type "))
            .filter_map(|l| l.split([' ', '<', '=']).next())
            .map(str::to_owned)
            .collect();
        crate::types::generated_file_is_current(PATH, &generate(&found, &known));
    }

    #[test]
    fn rust_types_read_as_typescript() {
        let ty = |s: &str| typescript(&syn::parse_str::<Type>(s).unwrap());
        assert_eq!(ty("Option<Vec<NewSecret>>"), "NewSecret[] | null");
        assert_eq!(ty("Vec<Option<String>>"), "(string | null)[]");
        assert_eq!(ty("control::Trial"), "Trial");
        assert_eq!(ty("usize"), "number");
        assert_eq!(ty("()"), "null");
        assert_eq!(camel("remove_from_client"), "removeFromClient");
        assert!(injected(
            &syn::parse_str::<Type>("State<'_, AppState>").unwrap()
        ));
    }
}
