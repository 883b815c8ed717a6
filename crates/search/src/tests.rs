use super::*;

/// Published servers' real tool names and descriptions.
const CATALOG: &[(&str, &str, &str)] = &[
    (
        "memory",
        "create_entities",
        "Create multiple new entities in the knowledge graph",
    ),
    (
        "memory",
        "add_observations",
        "Add new observations to existing entities in the knowledge graph",
    ),
    ("memory", "read_graph", "Read the entire knowledge graph"),
    (
        "memory",
        "search_nodes",
        "Search for nodes in the knowledge graph based on a query",
    ),
    ("git", "git_status", "Shows the working tree status"),
    (
        "git",
        "git_diff_unstaged",
        "Shows changes in the working directory that are not yet staged",
    ),
    ("git", "git_log", "Shows the commit logs"),
    (
        "time",
        "get_current_time",
        "Get current time in a specific timezones",
    ),
    ("time", "convert_time", "Convert time between timezones"),
    (
        "filesystem",
        "read_text_file",
        "Read the complete contents of a file from the file system as text.",
    ),
    (
        "filesystem",
        "write_file",
        "Create a new file or completely overwrite an existing file with new content.",
    ),
    ("weather", "get_forecast", "Weather forecast for a city"),
];

fn index() -> Index {
    Index::new(CATALOG.iter().map(|(server, name, description)| Doc {
        server,
        name,
        description,
        ..Doc::default()
    }))
}

fn names(index: &Index, query: &str) -> Vec<&'static str> {
    index
        .search(query, 20)
        .iter()
        .map(|h| CATALOG[h.doc].1)
        .collect()
}

#[test]
fn requests_in_words_find_their_tool_first() {
    let index = index();
    assert_eq!(
        names(&index, "the current time in Tokyo")[0],
        "get_current_time"
    );
    // Words alone cannot tell these two apart; both lead.
    let found = names(&index, "what time is it in Tokyo");
    assert!(found[..2].contains(&"get_current_time"), "{found:?}");
    assert_eq!(
        names(&index, "convert 3pm London time to New York")[0],
        "convert_time"
    );
    assert_eq!(names(&index, "show the commit history")[0], "git_log");
    assert_eq!(
        names(&index, "weather forecast for Lisbon")[0],
        "get_forecast"
    );
    assert_eq!(
        names(&index, "overwrite a file with new content")[0],
        "write_file"
    );
    assert_eq!(
        names(&index, "search the knowledge graph")[0],
        "search_nodes"
    );
}

#[test]
fn typos_are_forgiven_but_only_in_long_words() {
    let index = index();
    assert_eq!(names(&index, "wheather forcast")[0], "get_forecast");
    assert_eq!(names(&index, "knowlege grahp")[0..1], ["read_graph"]);
    // Words no tool has, nor anything like them: only guesses by meaning, unsure.
    let guesses = index.search("zzzz qqqq", 5);
    assert!(
        guesses.iter().all(|h| h.guess && h.confidence < 0.5),
        "{guesses:?}"
    );
}

/// A request in other words than the catalog's: no tool has "remember", "fact" or "person",
/// yet the tool that stores facts about entities is the closest in meaning.
#[test]
fn a_request_in_other_words_finds_the_tool_by_meaning() {
    let index = index();
    let hits = index.search("remember a fact about a person", 5);
    assert!(hits.iter().all(|h| h.guess), "{hits:?}");
    let found: Vec<&str> = hits.iter().map(|h| CATALOG[h.doc].1).collect();
    assert!(found.contains(&"add_observations"), "{found:?}");
    // Words and meaning together: "changes" is in two git tools; the one about changes not
    // yet staged wins on meaning for "what have I modified but not added".
    assert_eq!(
        names(&index, "show changes I modified but have not staged")[0],
        "git_diff_unstaged"
    );
}

#[test]
fn exact_names_come_first_in_every_spelling_with_full_confidence() {
    let index = index();
    for spelled in [
        "git_log",
        "GIT_LOG",
        "git__git_log",
        "git/git_log",
        " git.git_log ",
    ] {
        let hits = index.search(spelled, 5);
        assert_eq!(CATALOG[hits[0].doc].1, "git_log", "{spelled}");
        assert_eq!(hits[0].confidence, 1.0);
        assert!(hits.iter().skip(1).all(|h| h.confidence < 1.0));
    }
    // A name shared by two servers: both, first.
    let twice = Index::new(["a", "b"].map(|server| Doc {
        server,
        name: "echo",
        description: "Echo text back",
        ..Doc::default()
    }));
    assert_eq!(twice.search("echo", 5).len(), 2);
    assert_eq!(twice.search("b/echo", 5)[0].doc, 1);
}

#[test]
fn confidence_is_the_share_of_the_request_matched_and_how_close_in_meaning() {
    let index = index();
    let hits = index.search("weather forecast", 5);
    assert!(
        hits[0].confidence > 0.75 && hits[0].confidence < 1.0,
        "{hits:?}"
    );
    let partly = index.search("weather in the garden shed", 5);
    assert_eq!(CATALOG[partly[0].doc].1, "get_forecast");
    assert!(
        partly[0].confidence < 0.6 && partly[0].confidence > 0.0,
        "{partly:?}"
    );
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn limits_names_and_params_count() {
    let docs = [
        Doc {
            name: "query",
            description: "Runs something",
            params: "sql The SQL statement to run",
            ..Doc::default()
        },
        Doc {
            name: "sql_lint",
            description: "Checks SQL statements for mistakes; SQL SQL SQL",
            ..Doc::default()
        },
        Doc {
            name: "echo",
            description: "Echo",
            ..Doc::default()
        },
    ];
    let index = Index::new(docs);
    assert_eq!(index.search("sql", 1).len(), 1);
    assert_eq!(index.search("sql", 10).len(), 2, "echo does not match");
    assert_eq!(
        index.search("sql", 10)[0].doc,
        1,
        "a name word outweighs a parameter's"
    );
    assert_eq!(
        index.search("run a statement", 10)[0].doc,
        0,
        "parameters are searched"
    );
}

#[test]
fn hostile_and_empty_input_is_answered() {
    let index = index();
    for q in [
        "",
        "   ",
        "the of a",
        "💥💥",
        &"x".repeat(100_000),
        "\0\u{202e}",
    ] {
        let _ = index.search(q, 5);
    }
    assert!(index.search("", 5).is_empty());
    let empty = Index::new(std::iter::empty());
    assert!(empty.is_empty() && empty.search("anything", 5).is_empty());
    assert_eq!(
        words::stem_words("getCurrentTime HTTPServer"),
        ["get", "current", "time", "http", "server"]
    );
}

/// A vector that points along one axis: tools and requests "mean" what their axis says.
fn axis(i: usize) -> Vec<f32> {
    let mut v = vec![0.0; CATALOG.len()];
    v[i] = 1.0;
    v
}

/// With a sentence model's vectors, every tool is ranked, one none of whose words the request
/// has too (a guess); words still count; exact names still come first.
#[test]
fn a_sentence_models_vectors_rank_every_tool() {
    let at = |name: &str| CATALOG.iter().position(|t| t.1 == name).unwrap();
    let index = index().with_sentences((0..CATALOG.len()).map(axis).collect());
    // No word in common with add_observations, its meaning alone.
    let near = axis(at("add_observations"));
    let hits = index.search_with("remember Ana likes tea", Some(&near), 20);
    assert_eq!(CATALOG[hits[0].doc].1, "add_observations");
    assert!(hits[0].guess, "no word matched: a guess");
    assert_eq!(hits.len(), CATALOG.len(), "every tool ranked");
    // Words and meaning together: "time" words lead among tools of the same meaning.
    let hits = index.search_with("convert time", Some(&axis(at("convert_time"))), 3);
    assert_eq!(CATALOG[hits[0].doc].1, "convert_time");
    assert!(!hits[0].guess);
    // An exact name first, with full confidence, whatever the vector says.
    let hits = index.search_with("git_log", Some(&near), 3);
    assert_eq!(
        (CATALOG[hits[0].doc].1, hits[0].confidence),
        ("git_log", 1.0)
    );
    // Without the request's vector, the built-in meaning ranks as before.
    assert_eq!(
        index.search_with("the current time in Tokyo", None, 1)[0].doc,
        at("get_current_time")
    );
}

/// Vectors that do not fit the catalog (another count, mixed widths, none) are not taken.
#[test]
fn vectors_that_do_not_fit_are_not_taken() {
    let near = axis(1);
    let plain: Vec<usize> = index()
        .search("remember Ana likes tea", 20)
        .iter()
        .map(|h| h.doc)
        .collect();
    for vectors in [
        vec![axis(0)],
        (0..CATALOG.len())
            .map(|i| if i == 3 { vec![1.0] } else { axis(i) })
            .collect(),
        Vec::new(),
    ] {
        let index = index().with_sentences(vectors);
        let got: Vec<usize> = index
            .search_with("remember Ana likes tea", Some(&near), 20)
            .iter()
            .map(|h| h.doc)
            .collect();
        assert_eq!(got, plain);
    }
}

/// The parts of a search ranked with another weight: words alone, meaning alone.
#[test]
fn parts_rank_with_any_weight() {
    let at = |name: &str| CATALOG.iter().position(|t| t.1 == name).unwrap();
    let index = index().with_sentences((0..CATALOG.len()).map(axis).collect());
    let parts = index.parts("git status", Some(&axis(at("git_log"))));
    let first = |words: f32| {
        CATALOG[parts.rank(
            Fusion {
                words,
                every_tool: true,
                by_match: false,
            },
            1,
        )[0]
        .doc]
            .1
    };
    assert_eq!(first(1.0), "git_status");
    assert_eq!(first(0.0), "git_log");
}

/// The sentence model reads a request's first 64 pieces, the same as the text's own first ones:
/// a pasted page costs a search no more than a sentence.
#[test]
fn a_long_request_is_read_by_its_first_pieces() {
    let long = "show the commit history of the repository ".repeat(60);
    let all = meaning::pieces(&long);
    let read = meaning::request_pieces(&long);
    assert!(all.len() > meaning::REQUEST_PIECES);
    assert_eq!(read, all[..meaning::REQUEST_PIECES]);
    let short = "show commit history";
    assert_eq!(meaning::request_pieces(short), meaning::pieces(short));
}

/// A tool's meaning names its server when the catalog has several ("memory" says what
/// `create_entities` keeps), and not when every tool shares one name. (What it adds to the
/// ranking is measured by the search bench, with the sentence model.)
#[test]
fn a_tools_meaning_names_its_server_among_several() {
    let doc = |server| Doc {
        server,
        name: "create_entities",
        description: "Create entities in the graph",
        ..Doc::default()
    };
    assert!(Index::names_servers(["memory", "git", "memory"]));
    assert!(!Index::names_servers(["memory", "memory"]));
    assert!(!Index::names_servers([]));
    assert_eq!(
        Index::meaning_text(&doc("memory"), true),
        "memory create entities : Create entities in the graph"
    );
    assert_eq!(
        Index::meaning_text(&doc("memory"), false),
        "create entities : Create entities in the graph"
    );
    // Its parameters say what it works on.
    let with_params = Doc {
        params: "entities The entities to create",
        ..doc("memory")
    };
    assert_eq!(
        Index::meaning_text(&with_params, false),
        "create entities : Create entities in the graph entities The entities to create"
    );
}

/// Weighed by match, the words count as much as the request's share one tool has: a request
/// only half of whose words any tool has is ranked by meaning, where the same weight fixed
/// ranks it by its words.
#[test]
fn words_weighed_by_match_count_as_much_as_they_match() {
    let at = |name: &str| CATALOG.iter().position(|t| t.1 == name).unwrap();
    let index = index().with_sentences((0..CATALOG.len()).map(axis).collect());
    let first = |request: &str, by_match: bool| {
        let parts = index.parts(request, Some(&axis(at("git_log"))));
        let fusion = Fusion {
            words: 0.6,
            every_tool: true,
            by_match,
        };
        CATALOG[parts.rank(fusion, 1)[0].doc].1
    };
    assert_eq!(first("weather forecast xyzzy plugh", false), "get_forecast");
    assert_eq!(first("weather forecast xyzzy plugh", true), "git_log");
    // Every word matched: the words keep their whole weight.
    assert_eq!(first("weather forecast", true), "get_forecast");
}

/// A search's first hits are those of a longer one, in the same order: only the first `limit`
/// of the ranked tools are ordered, with and without a sentence model, an exact name first.
#[test]
fn fewer_hits_are_the_first_of_more() {
    let blurred = |i: usize| -> Vec<f32> {
        let mut v: Vec<f32> = (0..CATALOG.len())
            .map(|j| ((i * 7 + j * 3) % 5) as f32)
            .collect();
        v[i] += 4.0;
        v
    };
    let plain = index();
    let with_vectors = index().with_sentences((0..CATALOG.len()).map(blurred).collect());
    let requests = [
        "the current time in Tokyo",
        "show the commit history",
        "read_graph",
        "knowledge graph entities file",
        "zzzz qqqq",
    ];
    for request in requests {
        for (index, vector) in [(&plain, None), (&with_vectors, Some(blurred(3)))] {
            let all = index.search_with(request, vector.as_deref(), 100);
            // With vectors every tool is ranked; without, those with a word or a meaning.
            let least = if vector.is_some() { CATALOG.len() } else { 2 };
            assert!(all.len() >= least, "{request}: {all:?}");
            for limit in 0..=all.len() {
                let first = index.search_with(request, vector.as_deref(), limit);
                assert_eq!(first, all[..limit], "{request}, {limit}");
            }
        }
    }
}
