//! `mlbench publish` and `mlbench verify`: a site that is exactly what its zips say,
//! deterministic, self-contained (every link resolves inside it; in Chromium, nothing
//! loaded from outside), and the hostile cases: a figure altered by hand, a byte changed
//! in a zip, a store changed on disk, a release date in the future, a non-empty --out.

use crate::fixtures::{folder_files, mlbench, sha256_hex};
use crate::rounds::{Rounds, Sub, kept_zip, rounds};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Two rounds of two vendors, and a third vendor in 2026 released in 2099 (every
/// submission's means its own: the same bytes cannot be archived twice).
fn two_rounds() -> Rounds {
    let sub = |label, means, release| Sub {
        label,
        means,
        release,
    };
    rounds(&[
        (
            "2025",
            &[
                sub("vendorA", &[("convnet", 100.0), ("vae", 50.0)], None),
                sub("vendorB", &[("convnet", 160.0), ("vae", 40.0)], None),
            ],
        ),
        (
            "2026",
            &[
                sub("vendorA", &[("convnet", 160.0), ("vae", 52.0)], None),
                sub("vendorB", &[("convnet", 161.0), ("vae", 40.0)], None),
                sub(
                    "vendorC",
                    &[("convnet", 90.0), ("vae", 45.0)],
                    Some("2099-01-01"),
                ),
            ],
        ),
    ])
}

/// `mlbench publish --store STORE --out SITE --now 2030-01-01 ARGS…`.
fn publish(store: &Path, site: &Path, args: &[&str]) -> (i32, String) {
    let out = (mlbench()
        .arg("publish")
        .arg("--store")
        .arg(store)
        .arg("--out")
        .arg(site))
    .args(["--now", "2030-01-01", "--resamples", "200"])
    .args(args)
    .output()
    .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `mlbench verify SITE`: exit status and what it printed.
fn verify(site: &Path) -> (i32, String, String) {
    let out = mlbench().arg("verify").arg(site).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        out.status.code().unwrap(),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// Rewrites the site's SHA256SUMS line of `file` to its new bytes (as someone who edits
/// a page and covers it up would).
fn cover_up(site: &Path, file: &str) {
    let sums = std::fs::read_to_string(site.join("SHA256SUMS")).unwrap();
    let hex = sha256_hex(&std::fs::read(site.join(file)).unwrap());
    let fixed: String = (sums.lines())
        .map(|l| match l.ends_with(&format!("  {file}")) {
            true => format!("{hex}  {file}\n"),
            false => format!("{l}\n"),
        })
        .collect();
    std::fs::write(site.join("SHA256SUMS"), fixed).unwrap();
}

#[test]
fn a_site_is_what_its_zips_say_and_the_same_store_gives_the_same_bytes() {
    let r = two_rounds();
    let site = r.root.path().join("site");
    let (code, err) = publish(&r.store(), &site, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("published 4 submissions in 2 rounds"), "{err}");
    assert!(
        err.contains("1 submission released after 2030-01-01"),
        "{err}"
    );
    let index: Value =
        serde_json::from_slice(&std::fs::read(site.join("index.json")).unwrap()).unwrap();
    assert_eq!(
        (
            &index["schema_version"],
            &index["unreleased"],
            &index["now"]
        ),
        (&Value::from(1), &Value::from(1), &Value::from("2030-01-01"))
    );
    let labels: Vec<&str> = (index["rounds"][1]["entries"].as_array().unwrap().iter())
        .map(|e| e["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["vendorA", "vendorB"]);
    let html = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(
        html.contains("1 submission left out: released after 2030-01-01"),
        "{html}"
    );
    // Every file but SHA256SUMS is listed in it, with its hash; the zips are the store's.
    let files = folder_files(&site);
    let sums = std::fs::read_to_string(site.join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), files.len() - 1);
    for (path, bytes) in &files {
        if path != "SHA256SUMS" {
            assert!(
                sums.contains(&format!("{}  {path}\n", sha256_hex(bytes))),
                "{path}"
            );
        }
    }
    let zip = std::fs::read(kept_zip(&r.store(), 1)).unwrap();
    assert_eq!(
        std::fs::read(site.join(format!("zips/{}.zip", sha256_hex(&zip)))).unwrap(),
        zip
    );
    // The round's grid: vendorB's convnet is 1.6 × vendorA's in 2025 (the baseline, first by label).
    let grid: Value =
        serde_json::from_slice(&std::fs::read(site.join("rounds/2025/grid.json")).unwrap())
            .unwrap();
    assert_eq!(grid["baseline"], "vendorA");
    let b = (grid["vendors"].as_array().unwrap().iter())
        .find(|v| v["name"] == "vendorB")
        .unwrap();
    assert!(
        crate::fixtures::close(crate::fixtures::f(&b["cells"]["convnet"]["ratio"]), 1.6),
        "{b}"
    );
    // The history: vendorA's convnet 100 → 160 flagged up.
    let history: Value =
        serde_json::from_slice(&std::fs::read(site.join("history/history.json")).unwrap()).unwrap();
    assert!(history["flagged"].as_u64().unwrap() >= 2, "{history}");
    let (code, out, err) = verify(&site);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    // The same store and --now: the same bytes, wherever it is written.
    let again = r.root.path().join("elsewhere/site2");
    assert_eq!(publish(&r.store(), &again, &[]).0, 0);
    assert_eq!(folder_files(&again), files);
    // Not into a folder that holds something, unless --force.
    let (code, err) = publish(&r.store(), &site, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not empty"), "{err}");
    assert_eq!(publish(&r.store(), &site, &["--force"]).0, 0);
    assert_eq!(folder_files(&site), files);
    // --force never replaces the store, nor a folder that holds it, nor writes into it.
    for out in [
        r.store(),
        r.root.path().to_path_buf(),
        r.store().join("site"),
    ] {
        let (code, err) = publish(&r.store(), &out, &["--force"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("would replace or hold the store"), "{err}");
    }
    assert_eq!(crate::rounds::run(&r.store(), "archive", &["check"]).0, 0);
}

#[test]
fn verify_names_a_figure_altered_by_hand_and_a_byte_changed_in_a_zip() {
    let r = two_rounds();
    let site = r.root.path().join("site");
    assert_eq!(publish(&r.store(), &site, &[]).0, 0);
    let pristine = folder_files(&site);
    // A figure altered in one page's JSON, SHA256SUMS covered up: the recomputation finds it.
    let file = "rounds/2026/grid.json";
    let text = std::fs::read_to_string(site.join(file)).unwrap();
    let mut grid: Value = serde_json::from_str(&text).unwrap();
    let i = (grid["vendors"].as_array().unwrap().iter())
        .position(|v| v["name"] == "vendorB")
        .unwrap();
    let was = grid["vendors"][i]["cells"]["vae"]["ratio"].clone();
    grid["vendors"][i]["cells"]["vae"]["ratio"] = Value::from(9.5);
    std::fs::write(
        site.join(file),
        serde_json::to_string_pretty(&grid).unwrap() + "\n",
    )
    .unwrap();
    cover_up(&site, file);
    let (code, out, _) = verify(&site);
    assert_eq!(code, 1);
    let line =
        format!("{file}: vendors[{i}].cells.vae.ratio: the page says 9.5, its zips make {was}");
    assert!(out.contains(&line), "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    // Not covered up: SHA256SUMS names it too.
    std::fs::write(
        site.join("SHA256SUMS"),
        &pristine.iter().find(|(p, _)| p == "SHA256SUMS").unwrap().1,
    )
    .unwrap();
    let (code, out, _) = verify(&site);
    assert_eq!(code, 1);
    assert!(out.contains(&format!("{file}: SHA256SUMS says")), "{out}");
    // Back as published, then one byte of one zip changed.
    std::fs::write(
        site.join(file),
        &pristine.iter().find(|(p, _)| p == file).unwrap().1,
    )
    .unwrap();
    assert_eq!(verify(&site).0, 0);
    let zip = (pristine.iter())
        .find(|(p, _)| p.starts_with("zips/"))
        .unwrap()
        .0
        .clone();
    let mut bytes = std::fs::read(site.join(&zip)).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(site.join(&zip), &bytes).unwrap();
    let (code, out, _) = verify(&site);
    assert_eq!(code, 1);
    assert!(out.contains(&format!("{zip}: SHA256SUMS says")), "{out}");
    assert!(
        out.contains(&format!(
            "{zip}: a zip named by its hash, but its bytes hash to {}",
            sha256_hex(&bytes)
        )),
        "{out}"
    );
}

#[test]
fn publish_refuses_a_store_whose_zip_changed_or_went_missing() {
    let r = two_rounds();
    let store = r.store();
    let zip = kept_zip(&store, 3);
    let mut bytes = std::fs::read(&zip).unwrap();
    bytes[10] ^= 0xff;
    std::fs::write(&zip, &bytes).unwrap();
    let site = r.root.path().join("site");
    let (code, err) = publish(&store, &site, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!("#3 {}: changed on disk", zip.display())),
        "{err}"
    );
    assert!(!site.exists(), "nothing is written");
    std::fs::remove_file(&zip).unwrap();
    let (code, err) = publish(&store, &site, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("missing"), "{err}");
    // The entry with a future release date is left out, so its zip is never read.
    let future = kept_zip(&store, 5);
    std::fs::remove_file(&future).unwrap();
    assert_eq!(crate::rounds::run(&store, "archive", &["remove", "3"]).0, 0);
    let (code, err) = publish(&store, &site, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("published 3 submissions") && err.contains("1 removed"),
        "{err}"
    );
}

/// Every `href` of `html`.
fn hrefs(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].replace("&amp;", "&"))
        .collect()
}

/// The DOM of a page of `site` as headless Chromium renders it, after
/// `scripts/check-html.sh --site` has judged it (not blank, no console message, so no
/// load blocked by the page's policy; `tables` captioned tables; every link naming a
/// file inside the site). The screenshot and the DOM are written under `work`, never in
/// the site. `None` without a browser, unless `MLBENCH_REQUIRE_BROWSER` is set (CI).
fn in_chromium(page: &Path, site: &Path, tables: usize, work: &Path) -> Option<String> {
    let found = std::env::var_os("CHROMIUM").map(PathBuf::from).or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|d| d.join("chromium"))
            .find(|p| p.is_file())
    });
    let Some(browser) = found else {
        let required = std::env::var_os("MLBENCH_REQUIRE_BROWSER").is_some();
        assert!(
            !required,
            "MLBENCH_REQUIRE_BROWSER is set and no chromium is in PATH"
        );
        eprintln!("skipped: no chromium in PATH (CI installs it)");
        return None;
    };
    let name = page
        .strip_prefix(site)
        .unwrap()
        .to_string_lossy()
        .replace('/', "_");
    let (shot, dom) = (
        work.join(format!("{name}.png")),
        work.join(format!("{name}.dom")),
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-html.sh");
    let out = std::process::Command::new(script)
        .arg(page)
        .args(["--expect-tables", &tables.to_string(), "--site"])
        .arg(site)
        .arg("--screenshot")
        .arg(&shot)
        .arg("--dom")
        .arg(&dom)
        .env("CHROMIUM", browser)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {said}", page.display());
    Some(std::fs::read_to_string(dom).unwrap())
}

#[test]
fn every_link_of_every_page_resolves_inside_the_site() {
    let r = two_rounds();
    let site = r.root.path().join("site");
    assert_eq!(publish(&r.store(), &site, &[]).0, 0);
    let pages: Vec<PathBuf> = (folder_files(&site).into_iter())
        .filter(|(p, _)| p.ends_with(".html"))
        .map(|(p, _)| site.join(p))
        .collect();
    // index, history, 2 rounds, 4 submissions.
    assert_eq!(pages.len(), 8);
    let mut links = 0;
    for page in &pages {
        let html = std::fs::read_to_string(page).unwrap();
        let tables = html.matches("<table").count();
        let dom = in_chromium(page, &site, tables, r.root.path()).unwrap_or(html);
        for href in hrefs(&dom) {
            if href.starts_with('#') {
                continue;
            }
            assert!(
                !href.contains(':') && !href.starts_with('/'),
                "{}: {href} leaves the site",
                page.display()
            );
            let target = page.parent().unwrap().join(&href);
            let target = std::fs::canonicalize(&target)
                .unwrap_or_else(|_| panic!("{}: {href} resolves to nothing", page.display()));
            assert!(
                target.starts_with(std::fs::canonicalize(&site).unwrap()),
                "{href}"
            );
            links += 1;
        }
    }
    // At least the index's links to each round, submission, zip and history.
    assert!(links > 30, "{links}");
    // The browser wrote nothing into the site: it is still what its zips say.
    assert_eq!(verify(&site).0, 0);
}

#[test]
fn a_site_whose_zip_is_missing_cannot_be_made_again_and_says_so() {
    let r = two_rounds();
    let site = r.root.path().join("site");
    assert_eq!(publish(&r.store(), &site, &[]).0, 0);
    let index: Value =
        serde_json::from_slice(&std::fs::read(site.join("index.json")).unwrap()).unwrap();
    let zip = index["rounds"][0]["entries"][0]["zip"]
        .as_str()
        .unwrap()
        .to_owned();
    std::fs::remove_file(site.join(&zip)).unwrap();
    let (code, out, _) = verify(&site);
    assert_eq!(code, 1);
    assert!(
        out.contains(&format!("{zip}: listed in SHA256SUMS, not in the site")),
        "{out}"
    );
    assert!(
        out.contains("zips/: the pages cannot be made again from the zips"),
        "{out}"
    );
    // Not a site at all: exit 2.
    let (code, _, err) = verify(r.root.path());
    assert_eq!(code, 2, "{err}");
}

#[test]
fn racing_adds_and_one_zip_under_two_labels_publish_as_the_store_holds_them() {
    let r = two_rounds();
    let store = r.store();
    // Two adds at once into one round: both land, and both are published.
    let add = |label: &str, convnet: f64| {
        let dir = r.root.path().join("race").join(label);
        crate::fixtures::write_vendor(&dir, &[("convnet", convnet), ("vae", 30.0)]);
        std::process::Command::new(assert_cmd::cargo::cargo_bin("mlbench"))
            .arg("archive")
            .arg("--store")
            .arg(&store)
            .args(["add", "2027"])
            .arg(&dir)
            .arg("--allow-errors")
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let (mut x, mut y) = (add("vendorX", 70.0), add("vendorY", 71.0));
    assert!(x.wait().unwrap().success() && y.wait().unwrap().success());
    // vendorA's 2025 zip under another label: refused while #1 holds it; once #1 is
    // removed, the zip is published once, under the new label only.
    let first = kept_zip(&store, 1);
    let relabel = format!("vendorZ={}", first.display());
    let again = [
        "add",
        "2025",
        first.to_str().unwrap(),
        "--label",
        relabel.as_str(),
    ];
    assert_eq!(crate::rounds::run(&store, "archive", &again).0, 2);
    assert_eq!(crate::rounds::run(&store, "archive", &["remove", "1"]).0, 0);
    assert_eq!(crate::rounds::run(&store, "archive", &again).0, 0);
    let site = r.root.path().join("site");
    let (code, err) = publish(&store, &site, &[]);
    assert_eq!(code, 0, "{err}");
    let index: Value =
        serde_json::from_slice(&std::fs::read(site.join("index.json")).unwrap()).unwrap();
    let rows: Vec<(String, String)> = (index["rounds"].as_array().unwrap().iter())
        .flat_map(|r| r["entries"].as_array().unwrap().iter())
        .map(|e| {
            (
                e["round"].as_str().unwrap().to_owned(),
                e["label"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want = [
        ("2025", "vendorB"),
        ("2025", "vendorZ"),
        ("2026", "vendorA"),
        ("2026", "vendorB"),
        ("2027", "vendorX"),
        ("2027", "vendorY"),
    ];
    assert_eq!(rows, want.map(|(a, b)| (a.to_owned(), b.to_owned())));
    assert_eq!(index["removed"], 1);
    let zips = std::fs::read_dir(site.join("zips")).unwrap().count();
    assert_eq!(zips, 6);
    assert_eq!(verify(&site).0, 0);
}
