use std::sync::atomic::Ordering;

use offload_testkit::s3::{BUCKET, Weed};

use super::key::ObjectUrl;
use crate::config::RootEntry;
use crate::roots::Roots;
use offload_formats::files::{Inspector, Quiet, ReadRequest, Source};

#[test]
fn urls_parse_without_decoding_and_refuse_ways_out() {
    let u = ObjectUrl::parse("s3://data/team/a b/x.csv").unwrap();
    assert_eq!((u.scheme, u.bucket.as_str()), ("s3", "data"));
    assert_eq!(u.segments, ["team", "a b", "x.csv"]);
    assert_eq!(u.to_string(), "s3://data/team/a b/x.csv");
    assert_eq!(ObjectUrl::parse("S3://data/").unwrap().segments.len(), 0);
    assert_eq!(
        ObjectUrl::parse("s3://data/50%off.csv").unwrap().segments,
        ["50%off.csv"]
    );
    for bad in [
        "s3://data/a/../b",
        "s3://data/./b",
        "s3://data/a//b",
        "s3://data/a%2e%2e/b",
        "s3://data/a%2Fb",
        "s3://data/a%5cb",
        "s3://data/a\\b",
        "s3://data/a\u{7}b",
        "s3:///a",
        "s3://../a",
        "s3://da%74a/a",
    ] {
        assert!(ObjectUrl::parse(bad).is_err(), "{bad} was accepted");
    }
    let root = ObjectUrl::parse("s3://data/team").unwrap();
    assert!(
        ObjectUrl::parse("s3://data/team/x")
            .unwrap()
            .is_inside(&root)
    );
    assert!(ObjectUrl::parse("s3://data/team").unwrap().is_inside(&root));
    assert!(
        !ObjectUrl::parse("s3://data/teamx/x")
            .unwrap()
            .is_inside(&root)
    );
    assert!(
        !ObjectUrl::parse("s3://data2/team/x")
            .unwrap()
            .is_inside(&root)
    );
    assert!(
        !ObjectUrl::parse("gs://data/team/x")
            .unwrap()
            .is_inside(&root)
    );
}

fn bucket_roots(weed: &Weed, prefix: &str) -> Roots {
    let entry: RootEntry = serde_json::from_value(weed.root(prefix, true)).unwrap();
    let fallback = tempfile::tempdir().unwrap();
    let (roots, warnings) = Roots::from_entries(&[entry], &fallback.path().join("fb"));
    assert!(warnings.is_empty(), "{warnings:?}");
    roots
}

/// Head, tail and a deep read of a 64 MiB object fetch a few chunks, not the object; the first
/// exact count reads it once, after which deep reads cost one chunk again.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn reads_fetch_about_what_they_return() {
    let weed = Weed::get().await;
    let prefix = weed.prefix("fetch");
    let body: String = (0..1_600_000u64)
        .map(|i| format!("{i:>10} {}\n", "y".repeat((i % 60) as usize)))
        .collect();
    let size = body.len() as u64;
    assert!(size > 60 << 20);
    weed.put(&format!("{prefix}/big.log"), body.into_bytes())
        .await;
    let roots = bucket_roots(weed, &prefix);
    let fetched = roots.buckets()[0].fetched.clone();
    let url = format!("s3://{BUCKET}/{prefix}/big.log");
    let costs = tokio::task::spawn_blocking(move || {
        let inspector = Inspector::default();
        let cost = |what: &str, f: &dyn Fn(Source, &std::path::Path)| {
            let before = fetched.bytes.load(Ordering::Relaxed);
            let (source, shown) = roots.open(&url).unwrap();
            f(source, &shown);
            (
                what.to_owned(),
                fetched.bytes.load(Ordering::Relaxed) - before,
            )
        };
        let head = cost("head", &|s, p| {
            let r = inspector
                .read(
                    s,
                    p,
                    &ReadRequest {
                        length: 100,
                        ..Default::default()
                    },
                    &Quiet,
                )
                .unwrap();
            assert!(
                r.content
                    .unwrap()
                    .starts_with("         0 \n         1 y\n")
            );
        });
        let tail = cost("tail", &|s, p| {
            let r = inspector
                .read(
                    s,
                    p,
                    &ReadRequest {
                        offset: -10,
                        ..Default::default()
                    },
                    &Quiet,
                )
                .unwrap();
            assert!(
                r.content
                    .unwrap()
                    .ends_with(&format!("   1599999 {}", "y".repeat(39)))
            );
        });
        let summary = cost("summary", &|s, p| {
            let r = inspector.summarize(s, p, 20, &Quiet).unwrap();
            assert_eq!((r.line_count, r.line_count_exact), (1_600_000, true));
        });
        let deep = cost("deep", &|s, p| {
            let r = inspector
                .read(
                    s,
                    p,
                    &ReadRequest {
                        offset: 1_234_567,
                        length: 3,
                        ..Default::default()
                    },
                    &Quiet,
                )
                .unwrap();
            assert!(r.content.unwrap().starts_with("   1234567 "));
        });
        let again = cost("summary again", &|s, p| {
            let r = inspector.summarize(s, p, 20, &Quiet).unwrap();
            assert_eq!(r.line_count, 1_600_000);
        });
        [head, tail, summary, deep, again]
    })
    .await
    .unwrap();
    let by = |name: &str| costs.iter().find(|(n, _)| n == name).unwrap().1;
    for small in ["head", "tail", "deep", "summary again"] {
        assert!(
            by(small) < 1 << 20,
            "{small} fetched {} bytes: {costs:?}",
            by(small)
        );
    }
    // The first exact count reads the object once (and not much more).
    assert!(
        by("summary") >= size && by("summary") < size + (16 << 20),
        "{costs:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn new_objects_never_replace_existing_ones_small_or_multipart() {
    use object_store::ObjectStoreExt;
    let weed = Weed::get().await;
    let prefix = weed.prefix("write");
    let roots = bucket_roots(weed, &prefix);
    let store = roots.buckets()[0].store.clone();
    for size in [5_000usize, 40 << 20] {
        let body: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &body).unwrap();
        let key = object_store::path::Path::from(format!("{prefix}/out-{size}.bin"));
        let hidden = object_store::path::Path::from(format!("{prefix}/.offload/uploads/u-{size}"));
        let put = |file: &std::fs::File| {
            let mut f = file.try_clone().unwrap();
            std::io::Seek::rewind(&mut f).unwrap();
            super::put_new(&store, &key, &hidden, f, size as u64)
        };
        put(&file).await.unwrap();
        assert_eq!(store.get(&key).await.unwrap().bytes().await.unwrap(), body);
        let again = put(&file).await;
        assert!(
            matches!(again, Err(super::WriteError::Exists(_))),
            "{size}: {again:?}"
        );
        assert!(
            store.head(&hidden).await.is_err(),
            "{size}: the upload's hidden object is left"
        );
    }
    assert_eq!(
        weed.list(&format!("{prefix}/.offload")).await,
        Vec::<String>::new()
    );
}
