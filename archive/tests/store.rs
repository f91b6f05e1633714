//! The store on disk: adds, no-ops, refusals, removal, and the check's findings.

use mlbench_archive::store::sha256_hex;
use mlbench_archive::{Added, ArchiveError, NewEntry, Store};
use mlbench_results::{GpuModel, Hardware, Validity};

fn entry(round: &str, label: &str) -> NewEntry {
    NewEntry {
        round: round.into(),
        label: label.into(),
        track: "baseline".into(),
        hardware: Hardware {
            gpus: vec![GpuModel {
                name: "TITAN RTX".into(),
                count: 2,
            }],
            gpu_count: 2,
            hosts: vec!["node".into()],
            ..Hardware::default()
        },
        runtime: "mila-iqia/training scripts".into(),
        validity: Validity {
            passed: false,
            errors: 3,
            warnings: 1,
            waived: 0,
            allowed_errors: true,
            failed: Vec::new(),
        },
        tool: "mlbench test".into(),
        received: "2026-12-02".into(),
        released: Some("2027-01-15".into()),
    }
}

/// Keeps `bytes` and indexes them as `new`.
fn add(store: &mut Store, bytes: &[u8], new: &NewEntry) -> Result<Added, ArchiveError> {
    let (sha, _) = store.put_zip(bytes)?;
    store.add(&sha, new)
}

#[test]
fn bytes_are_kept_by_their_hash_and_indexed_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("store")).unwrap();
    let Added::New(e) = add(&mut store, b"zip one", &entry("2026", "A")).unwrap() else {
        panic!("not new")
    };
    assert_eq!(e.sha256, sha256_hex(b"zip one"));
    // The bytes lie at their address, unchanged; the index has what was said of them.
    let path = store.zip_path(&e.sha256);
    assert!(path.ends_with(format!("zips/sha256/{}/{}.zip", &e.sha256[..2], e.sha256)));
    assert_eq!(std::fs::read(&path).unwrap(), b"zip one");
    assert_eq!(
        (e.id, e.bytes, e.gpus.as_deref()),
        (1, 7, Some("2 × TITAN RTX"))
    );
    assert_eq!(
        (e.passed, e.errors, e.warnings, e.allowed_errors),
        (false, 3, 1, true)
    );
    assert_eq!(e.released.as_deref(), Some("2027-01-15"));
    assert_eq!(e.hardware.as_ref().unwrap().gpu_count, 2);
    // The same again: nothing changes.
    let again = add(&mut store, b"zip one", &entry("2026", "A")).unwrap();
    assert_eq!(again, Added::AlreadyThere(e.clone()));
    assert_eq!(store.list().unwrap().len(), 1);
    // The same bytes as another vendor, or in another round: refused.
    let other = add(&mut store, b"zip one", &entry("2026", "B")).unwrap_err();
    assert!(
        matches!(other, ArchiveError::SameBytes { id: 1, .. }),
        "{other}"
    );
    let later = add(&mut store, b"zip one", &entry("2027", "A")).unwrap_err();
    assert!(matches!(later, ArchiveError::SameBytes { .. }), "{later}");
    // Other bytes under a label the round holds: refused until it is removed.
    let taken = add(&mut store, b"zip two", &entry("2026", "A")).unwrap_err();
    assert!(
        matches!(taken, ArchiveError::LabelTaken { id: 1, .. }),
        "{taken}"
    );
    let removed = store.remove("#1", "2026-12-03").unwrap();
    assert_eq!(removed.removed.as_deref(), Some("2026-12-03"));
    assert!(matches!(
        store.remove("1", "2026-12-04"),
        Err(ArchiveError::AlreadyRemoved { id: 1, .. })
    ));
    assert!(matches!(
        add(&mut store, b"zip two", &entry("2026", "A")),
        Ok(Added::New(_))
    ));
    // The removed entry is still listed, and its bytes stay.
    let all = store.list().unwrap();
    assert_eq!(all.len(), 2);
    assert!(path.exists());
    // By a hash prefix, or not at all.
    assert_eq!(store.find(&e.sha256[..8]).unwrap().id, 1);
    assert!(matches!(store.find("99"), Err(ArchiveError::NotFound(_))));
    assert!(matches!(store.find("abc"), Err(ArchiveError::NotFound(_))));
}

#[test]
fn the_check_names_changed_missing_and_unindexed_zips() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path()).unwrap();
    assert!(store.check().unwrap().is_empty());
    let mut ids = Vec::new();
    for (bytes, label) in [(&b"a"[..], "A"), (b"b", "B"), (b"c", "C")] {
        let Added::New(e) = add(&mut store, bytes, &entry("2026", label)).unwrap() else {
            panic!()
        };
        ids.push(e);
    }
    assert!(store.check().unwrap().is_empty());
    std::fs::write(store.zip_path(&ids[0].sha256), b"A").unwrap();
    std::fs::remove_file(store.zip_path(&ids[1].sha256)).unwrap();
    let (stray, _) = store.put_zip(b"never indexed").unwrap();
    let problems = store.check().unwrap();
    let said: Vec<(Option<i64>, &str)> = (problems.iter())
        .map(|p| (p.id, p.what.split(':').next().unwrap()))
        .collect();
    assert_eq!(
        said,
        [
            (Some(1), "changed on disk"),
            (Some(2), "missing"),
            (
                None,
                "not in the index (an add that stopped before indexing it?)"
            )
        ]
    );
    assert!(problems[0].what.contains(&sha256_hex(b"A")));
    assert_eq!(problems[2].path, store.zip_path(&stray));
    // A changed zip is never taken for its address again.
    let again = store.put_zip(b"a").unwrap_err();
    assert!(matches!(again, ArchiveError::Corrupt { .. }), "{again}");
}

#[test]
fn adds_from_several_processes_at_once_are_serialised() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    Store::open(&root).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let root = root.clone();
            std::thread::spawn(move || {
                // A connection each, as separate processes have.
                let mut store = Store::open(&root).unwrap();
                for i in 0..10 {
                    let bytes = format!("zip {t} {i}");
                    let new = entry("2026", &format!("V{t}-{i}"));
                    assert!(matches!(
                        add(&mut store, bytes.as_bytes(), &new),
                        Ok(Added::New(_))
                    ));
                    // And the same bytes as another thread adds them too: one entry.
                    let shared = entry("2026", "shared");
                    match add(&mut store, b"shared zip", &shared) {
                        Ok(_) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let store = Store::open(&root).unwrap();
    let all = store.list().unwrap();
    assert_eq!(all.len(), 41);
    assert_eq!(all.iter().filter(|e| e.label == "shared").count(), 1);
    assert!(store.check().unwrap().is_empty());
    assert_eq!(std::fs::read_dir(root.join("tmp")).unwrap().count(), 0);
}

#[test]
fn an_index_of_a_newer_layout_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open(dir.path()).unwrap());
    let db = rusqlite::Connection::open(dir.path().join("index.sqlite")).unwrap();
    db.execute(
        "UPDATE meta SET value = '99' WHERE key = 'schema_version'",
        [],
    )
    .unwrap();
    drop(db);
    let err = Store::open(dir.path()).err().unwrap();
    assert!(
        matches!(err, ArchiveError::NewerIndex { found: 99, .. }),
        "{err}"
    );
}
