//! Run against the model file the setup installs (`scripts/setup-model.sh`); the expected
//! numbers were printed by onnxruntime running the same file through the model's own
//! tokenizer (Hugging Face `tokenizers`).

use super::*;

/// The model the setup installed: `OFFLOAD_SEARCH_MODEL`, or where `scripts/setup-model.sh`
/// puts it.
pub fn installed() -> Sentences {
    installed_with(Products::Fastest)
}

fn installed_with(products: Products) -> Sentences {
    let path = std::env::var_os("OFFLOAD_SEARCH_MODEL")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| cached("all-MiniLM-L6-v2-int8.onnx", ""));
    Sentences::load_with(&path, products).expect("the installed model loads")
}

/// A model file `scripts/setup-model.sh {flag}` put in the cache.
fn cached(name: &str, flag: &str) -> std::path::PathBuf {
    let home = std::env::var_os("HOME").expect("HOME");
    let path = Path::new(&home).join(".cache/offload/models").join(name);
    assert!(
        path.is_file(),
        "{} is missing: run scripts/setup-model.sh {flag}",
        path.display()
    );
    path
}

fn close(got: &[f32], want: &[f32]) {
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 2e-5, "{got:?} beside {want:?}");
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// In floats, the vectors onnxruntime gives, to their last digits; the fastest products (in
/// 8-bit integers, where the processor has AVX-512 VNNI) point the same way within 0.5 %.
#[test]
fn vectors_are_the_models() {
    let model = installed_with(Products::Floats);
    let fastest = installed();
    for (pieces, start) in [
        (
            &[3342, 1037, 2755, 2055, 1037, 2711][..],
            [0.025778, 0.087523, -0.069522, 0.040299, 0.015988, 0.128451],
        ),
        (
            &[
                21025, 2102, 1035, 4487, 4246, 1035, 4895, 9153, 5999, 1024, 3065, 3431, 1999,
                1996, 2551, 14176, 2008, 2024, 2025, 2664, 9813,
            ][..],
            [
                -0.016876, -0.031996, 0.088764, -0.002107, 0.084505, -0.136664,
            ],
        ),
        (
            &[][..],
            [
                -0.127353, 0.040874, -0.001428, -0.015986, 0.053876, 0.008883,
            ],
        ),
    ] {
        let v = model.embed(pieces).unwrap();
        assert_eq!(v.len(), DIMENSIONS);
        close(&v[..6], &start);
        let norm: f32 = v.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-4);
        let fast = fastest.embed(pieces).unwrap();
        assert!(cosine(&fast, &v) > 0.995, "{}", cosine(&fast, &v));
        assert!((cosine(&fast, &fast) - 1.0).abs() < 1e-4);
    }
}

/// The candidate the bench weighs (paraphrase-MiniLM-L3-v2): float weights, no
/// `token_type_ids`, its own pooled vector among its outputs (pruned; the last layer is
/// pooled here as for the shipped model).
#[test]
fn a_float_model_of_two_inputs_gives_its_vectors() {
    let path = cached("paraphrase-MiniLM-L3-v2.onnx", "--candidate");
    let model = Sentences::load_with(&path, Products::Floats).unwrap();
    let v = model.embed(&[3342, 1037, 2755, 2055, 1037, 2711]).unwrap();
    assert_eq!(v.len(), DIMENSIONS);
    close(
        &v[..6],
        &[0.019586, 0.094483, 0.046536, -0.027249, 0.008482, -0.027687],
    );
    assert!(model.embed(&[30_522]).is_err());
}

/// Texts of different lengths in one pass: each the same vector as alone (the padding masked).
#[test]
fn a_pass_of_many_gives_each_its_own_vector() {
    let model = installed();
    let texts: [&[u32]; 3] = [&[3342, 1037, 2755], &[2054], &[1037; 40]];
    let together = model.embed_many(&texts).unwrap();
    for (text, v) in texts.iter().zip(&together) {
        close(v, &model.embed(text).unwrap());
    }
    assert!(model.embed_many(&[]).unwrap().is_empty());
    // In passes sorted by length, answered in the texts' order.
    let owned: Vec<Vec<u32>> = texts.iter().map(|t| t.to_vec()).collect();
    for (all, v) in model.embed_all(&owned).unwrap().iter().zip(&together) {
        close(all, v);
    }
}

#[test]
fn long_and_hostile_input_stays_within_bounds() {
    let model = installed();
    let long = vec![2054u32; 10_000];
    assert_eq!(model.embed(&long).unwrap().len(), DIMENSIONS);
    // Ids past the vocabulary are refused by the model, not read out of bounds.
    assert!(model.embed(&[u32::MAX]).is_err());
}

#[test]
fn a_file_that_is_not_the_model_is_refused() {
    let dir = std::env::temp_dir().join(format!("offload-embed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("model.onnx");
    std::fs::write(&junk, b"not a model").unwrap();
    let e = Sentences::load(&junk).err().expect("refused");
    assert!(e.to_string().contains("model.onnx"), "{e}");
    let e = Sentences::load(&dir.join("absent.onnx"))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("absent.onnx"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
