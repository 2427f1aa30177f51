//! Every file the documentation points to exists: the README's and the
//! docs' links to outputs, scenarios and each other, the project files the
//! pages name (`src/engine/lane.rs`, `scenarios/retry_storm.toml`), and every
//! `docs/<name>.md` that a scenario's comment, a source file or a test
//! names. A renamed or merged file otherwise leaves readers at a dead end.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::root;

/// Files under `dir` (recursively) whose name ends with one of `exts`.
fn files(dir: &Path, exts: &[&str], into: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, exts, into);
        } else if exts.iter().any(|e| path.extension().is_some_and(|x| x == *e)) {
            into.push(path);
        }
    }
}

/// The markdown pages: the README and `docs/`.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    files(&root().join("docs"), &["md"], &mut pages);
    pages
}

/// The prose of a markdown text: fenced code blocks (examples, not links
/// or headings) left out.
fn prose(text: &str) -> String {
    let mut prose = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    prose
}

/// The local targets of `[text](target)` links in a markdown text, each as
/// (file, anchor); the file is empty for a link within the page.
fn link_targets(text: &str) -> Vec<(String, Option<String>)> {
    let prose = prose(text);
    let mut targets = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let link = rest[..end].trim();
        let external = link.contains("://") || link.starts_with("mailto:");
        if !link.is_empty() && !external && !link.contains(' ') {
            let (file, anchor) = match link.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor.to_string())),
                None => (link, None),
            };
            targets.push((file.to_string(), anchor));
        }
        rest = &rest[end..];
    }
    targets
}

/// The anchors GitHub gives a page's headings: lower case, spaces as
/// hyphens, punctuation other than `-` and `_` dropped.
fn anchors(text: &str) -> Vec<String> {
    prose(text)
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|h| {
            h.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// Every `docs/<name>.md` named in a text.
fn docs_named(text: &str) -> Vec<String> {
    let mut named = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("docs/") {
        rest = &rest[at + 5..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !name.is_empty() && rest[name.len()..].starts_with(".md") {
            named.push(format!("docs/{name}.md"));
        }
    }
    named
}

/// Project paths named in a text: `src/...`, `tests/...`, `scenarios/...`
/// and the like, with a file extension (patterns with `*` or `<` are not
/// paths).
fn project_paths(text: &str) -> Vec<String> {
    const DIRS: [&str; 9] =
        ["src/", "tests/", "benches/", "examples/", "scripts/", "scenarios/", "fuzz/", "output/", "docs/"];
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_-./*<>".contains(c);
    let mut paths = Vec::new();
    let bytes = text.as_bytes();
    for (at, _) in text.char_indices() {
        let starts_word = at == 0 || !is_path_char(text[..at].chars().next_back().unwrap_or(' '));
        if !starts_word || !DIRS.iter().any(|d| bytes[at..].starts_with(d.as_bytes())) {
            continue;
        }
        let path: String = text[at..].chars().take_while(|&c| is_path_char(c)).collect();
        let path = path.trim_end_matches('.');
        let named_file = path.rsplit('/').next().is_some_and(|f| f.contains('.'));
        if named_file && !path.contains('*') && !path.contains('<') {
            paths.push(path.to_string());
        }
    }
    paths
}

#[test]
fn the_finders_find_what_they_should() {
    let text = "see [a](docs/a.md#x), ![c](output/b/c.svg) and [web](https://x.org/y.md); docs/nodes.md, docs/x.toml\n\
                ```markdown\n![example](output/e.svg)\n```\n[after](b.md)";
    let files: Vec<String> = link_targets(text).into_iter().map(|(f, _)| f).collect();
    assert_eq!(files, ["docs/a.md", "output/b/c.svg", "b.md"]);
    assert_eq!(link_targets(text)[0].1.as_deref(), Some("x"));
    let named =
        project_paths("see `src/engine/lane.rs`, src/engine/, output/*/report.md and scenarios/x.toml.");
    assert_eq!(named, ["src/engine/lane.rs", "scenarios/x.toml"]);
    assert_eq!(anchors("# A b\n## `x` (y), z: w\n```\n# not\n```\n"), ["a-b", "x-y-z-w"]);
    assert_eq!(docs_named(text), ["docs/a.md", "docs/nodes.md"]);
}

#[test]
fn every_markdown_link_leads_to_a_file() {
    let mut dead = Vec::new();
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        let dir = page.parent().unwrap();
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        for (file, anchor) in link_targets(&text) {
            let target = if file.is_empty() { page.clone() } else { dir.join(&file) };
            if !target.exists() {
                dead.push(format!("{name}: {file}"));
            } else if let Some(anchor) = anchor
                && target.extension().is_some_and(|e| e == "md")
                && !anchors(&fs::read_to_string(&target).unwrap()).contains(&anchor)
            {
                dead.push(format!("{name}: {file}#{anchor} (no such heading)"));
            }
        }
    }
    assert!(dead.is_empty(), "links to files that do not exist:\n{}", dead.join("\n"));
}

#[test]
fn every_docs_page_named_exists() {
    let mut named_in = pages();
    for (dir, exts) in [
        ("scenarios", &["toml"][..]),
        ("src", &["rs"]),
        ("tests", &["rs"]),
        ("benches", &["rs"]),
        ("examples", &["rs"]),
        ("scripts", &["sh", "py"]),
    ] {
        files(&root().join(dir), exts, &mut named_in);
    }
    let mut missing = Vec::new();
    for file in named_in {
        let text = fs::read_to_string(&file).unwrap();
        for page in docs_named(&text) {
            if !root().join(&page).exists() && file != root().join("tests/docs_links.rs") {
                missing.push(format!("{}: {page}", file.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(missing.is_empty(), "pages named that do not exist:\n{}", missing.join("\n"));
}

/// Paths the pages cite in other projects' trees.
const ELSEWHERE: [&str; 1] = ["src/http/modules/ngx_http_limit_req_module.c"];

#[test]
fn every_project_file_a_page_names_exists() {
    let mut missing = Vec::new();
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        for path in project_paths(&prose(&text)) {
            if !root().join(&path).exists() && !ELSEWHERE.contains(&path.as_str()) {
                missing.push(format!("{}: {path}", page.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(missing.is_empty(), "files named that do not exist:\n{}", missing.join("\n"));
}

/// The README's table of shipped scenarios names every scenario in
/// `scenarios/` (two once shipped without a row), and nothing else.
#[test]
fn the_readme_lists_every_shipped_scenario() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme.find("Shipped scenarios").expect("the README's table of shipped scenarios");
    let table: Vec<&str> = readme[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| scenario |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let mut listed: Vec<String> = table
        .iter()
        .flat_map(|row| row.split('|').nth(1).unwrap_or("").split(','))
        .map(|name| name.trim().trim_matches('`').to_string())
        .collect();
    listed.sort();
    let mut shipped = Vec::new();
    files(&root().join("scenarios"), &["toml"], &mut shipped);
    let mut shipped: Vec<String> = shipped
        .iter()
        .filter(|p| p.parent() == Some(&root().join("scenarios")))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    shipped.sort();
    assert_eq!(listed, shipped);
}
