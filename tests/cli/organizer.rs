//! The organizer's four vendors (`vendors.rs`): what ran each figure, and whether its
//! submission passed, travel with the report.

use crate::fixtures::{example_dir, mlbench};
use crate::vendors::{EXAMPLE_GPU, H100, Vendors, four_vendors};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The four vendors, made once for every test of this file (packing them takes a while).
fn vendors() -> &'static Vendors {
    static VENDORS: OnceLock<Vendors> = OnceLock::new();
    VENDORS.get_or_init(four_vendors)
}

/// `mlbench report SUB -g MODEL ARGS… -f json`: exit status and document.
fn report_json(sub: &std::path::Path, model: &str, args: &[&str]) -> (i32, serde_json::Value) {
    let out = mlbench()
        .arg("report")
        .arg(sub)
        .args(["-g", model, "-f", "json"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (out.status.code().unwrap(), doc)
}

/// `mlbench report SUB -g MODEL ARGS…` as a table: exit status and standard output.
fn report_text(sub: &std::path::Path, model: &str, args: &[&str]) -> (i32, String) {
    let out = mlbench()
        .arg("report")
        .arg(sub)
        .args(["-g", model])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    (out.status.code().unwrap(), text)
}

#[test]
fn the_four_vendors_are_what_they_are_said_to_be() {
    // A and D pass validation; B (a NaN loss) and C (no ssd) fail it.
    let codes: Vec<i32> = (vendors().zips().iter())
        .map(|zip| crate::fixtures::validate_json(zip, &[]).0)
        .collect();
    assert_eq!(codes, [0, 1, 1, 0]);
    let (_, c) = crate::fixtures::validate_json(vendors().zip('C'), &[]);
    let rules: Vec<&str> = (c["findings"].as_array().unwrap().iter())
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert!(rules.contains(&"bench.missing"), "{rules:?}");
}

#[test]
fn the_report_names_the_hardware_the_entries_ran_on() {
    let v = vendors();
    let (code, doc) = report_json(&v.zip('D'), "RTX", &[]);
    assert_eq!(code, 0);
    let hardware = &doc["hardware"];
    assert_eq!(hardware["gpus"][0]["name"], H100);
    // The example ran on 2 GPUs of one host; vendorD renamed the host.
    assert_eq!(hardware["gpus"][0]["count"], 2);
    assert_eq!(hardware["gpu_count"], 2);
    assert_eq!(hardware["hosts"], serde_json::json!(["vendorD-node"]));
    // H100 is not the RTX targets' model: the JSON and the header say so.
    assert_eq!(doc["gpu_match"]["matches"], false);
    assert_eq!(
        doc["gpu_match"]["entries"][0]["model"],
        serde_json::Value::Null
    );
    let (_, text) = report_text(&v.zip('D'), "RTX", &[]);
    assert!(
        text.contains(&format!("hardware: 2 × {H100} on vendorD-node")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "the entries ran on {H100}, not on the targets' model RTX"
        )),
        "{text}"
    );
    // vendorA's TITAN RTX is the RTX targets' model: no warning.
    let (_, doc) = report_json(&v.zip('A'), "RTX", &[]);
    assert_eq!(doc["gpu_match"]["matches"], true);
    assert_eq!(doc["gpu_match"]["entries"][0]["name"], EXAMPLE_GPU);
    let (_, text) = report_text(&v.zip('A'), "RTX", &[]);
    assert!(!text.contains("not on the targets' model"), "{text}");
}

#[test]
fn gpu_model_takes_the_entries_own_name_and_warns_across_models() {
    // "TITAN RTX", as the example's entries name it, means the RTX targets: the same
    // report as `-g RTX`.
    let (code, by_name) = report_text(&example_dir(), EXAMPLE_GPU, &[]);
    assert_eq!(code, 0, "{by_name}");
    assert_eq!(by_name, report_text(&example_dir(), "RTX", &[]).1);
    // Scoring TITAN RTX entries against V100 targets is said, not silent.
    let (_, doc) = report_json(&example_dir(), "V100", &[]);
    assert_eq!(doc["gpu_match"]["targets"], "V100");
    assert_eq!(doc["gpu_match"]["entries"][0]["model"], "RTX");
    assert_eq!(doc["gpu_match"]["matches"], false);
    // A name the table does not know is refused as before, naming what is built in.
    let out = mlbench()
        .arg("report")
        .arg(example_dir())
        .args(["-g", "GeForce 256"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("GeForce 256"));
}

#[test]
fn the_validation_verdict_travels_with_the_report() {
    let v = vendors();
    // vendorB: one NaN loss, packed with --allow-errors.
    let (code, doc) = report_json(&v.zip('B'), "RTX", &["--check"]);
    assert_eq!(code, 1, "a failing validation fails --check");
    let validity = &doc["validity"][0];
    assert_eq!(validity["submission"], v.zip('B').display().to_string());
    assert_eq!(validity["passed"], false);
    assert_eq!(validity["errors"], 1);
    assert_eq!(validity["allowed_errors"], true);
    assert_eq!(validity["failed"][0]["rule"], "loss.nan");
    assert_eq!(
        validity["failed"][0]["first"],
        "output0/fast_0.json: entry 0: batch_loss[3]"
    );
    // vendorC: no ssd at all; its errors are counted by rule and sum to the total.
    let (_, doc) = report_json(&v.zip('C'), "RTX", &[]);
    let validity = &doc["validity"][0];
    let by_rule: u64 = (validity["failed"].as_array().unwrap().iter())
        .map(|r| r["count"].as_u64().unwrap())
        .sum();
    assert!(validity["errors"].as_u64().unwrap() > 0);
    assert_eq!(by_rule, validity["errors"].as_u64().unwrap());
    assert_eq!(validity["allowed_errors"], true);
    // vendorA passes both its scoring and its validation.
    let (code, doc) = report_json(&v.zip('A'), "RTX", &["--check"]);
    assert_eq!(
        (code, &doc["validity"][0]["passed"]),
        (0, &serde_json::json!(true))
    );
    assert_eq!(doc["validity"][0]["allowed_errors"], false);
}

#[test]
fn a_page_shows_one_status_and_lists_what_failed() {
    let v = vendors();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("b.html");
    mlbench()
        .arg("report")
        .arg(v.zip('B'))
        .args(["-g", "RTX", "--scoring", "score", "--html"])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    // One badge of status on the page, and it is FAIL, naming the failed validation.
    assert_eq!(html.matches("<p class=\"status").count(), 1, "{html}");
    assert_eq!(html.matches("✓ PASS").count(), 0);
    let status = html
        .lines()
        .find(|l| l.contains("<p class=\"status"))
        .unwrap();
    assert!(status.contains("✗ FAIL"), "{status}");
    assert!(status.contains("validation of"), "{status}");
    assert!(
        status.contains("1 error (loss.nan), packed with --allow-errors"),
        "{status}"
    );
    // The text's list of failed entries is on the page too.
    assert!(
        html.contains("Failed entries (left out of the score)"),
        "{html}"
    );
    assert!(html.contains("nan_loss"), "{html}");
    // The page's validation section is the report's verdict: the same count.
    assert!(
        html.contains("<p class=\"counts failing\">1 error, 0 warnings</p>"),
        "{html}"
    );
    // And the text says the same status.
    let (_, text) = report_text(&v.zip('B'), "RTX", &["--scoring", "score"]);
    assert!(
        text.contains(
            "Result: FAIL: validation of {}: 1 error (loss.nan), packed with --allow-errors"
                .replace("{}", &v.zip('B').display().to_string())
                .as_str()
        ),
        "{text}"
    );
}

/// `mlbench grid` of the four vendors' zips, baseline vendorA, with `args`, as JSON.
fn grid_json(args: &[&str]) -> serde_json::Value {
    let out = mlbench()
        .arg("grid")
        .args(vendors().zips())
        .args(["--baseline", "vendorA", "-f", "json"])
        .args(args)
        .assert()
        .success();
    let out = out.get_output();
    serde_json::from_slice(&out.stdout).unwrap()
}

fn row<'a>(grid: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    let rows = grid["vendors"].as_array().unwrap();
    rows.iter().find(|r| r["name"] == name).unwrap()
}

#[test]
fn grid_rows_carry_hardware_and_validity_and_failing_rows_are_not_tiered() {
    let grid = grid_json(&[]);
    let d = row(&grid, "vendorD");
    assert_eq!(d["hardware"]["gpus"][0]["name"], H100);
    assert_eq!(d["hardware"]["gpu_count"], 2);
    assert_eq!(d["hardware"]["hosts"], serde_json::json!(["vendorD-node"]));
    assert_eq!(d["validity"]["passed"], true);
    for failing in ["vendorB", "vendorC"] {
        let r = row(&grid, failing);
        assert_eq!(r["validity"]["passed"], false, "{failing}");
        assert_eq!(r["validity"]["allowed_errors"], true, "{failing}");
        assert_eq!(r["tier"], serde_json::Value::Null, "{failing}");
    }
    // The passing rows are tiered among themselves: A (1.2×) above D (0.86×), and A's
    // paired ratio to the next tiered row is D's: 1.2 ÷ 0.86 (the example's noise is
    // the same in both, so the ratio is that of the scalings).
    assert_eq!(grid["tiers"], serde_json::json!([["vendorA"], ["vendorD"]]));
    let a = row(&grid, "vendorA");
    let expected = crate::vendors::A_SPEEDUP / crate::vendors::D_SHARE;
    assert!((a["ratio_to_next"].as_f64().unwrap() - expected).abs() < 1e-6 * expected);
    let notes: Vec<&str> = (grid["notes"].as_array().unwrap().iter())
        .filter_map(|n| n.as_str())
        .collect();
    assert!(
        notes.contains(
            &"vendorB, vendorC: failed validation, not tiered (--include-failing tiers them)"
        ),
        "{notes:?}"
    );
    // --include-failing tiers them, still marked.
    let grid = grid_json(&["--include-failing"]);
    let tiers = grid["tiers"].as_array().unwrap();
    assert_eq!(tiers.len(), 4, "{tiers:?}");
    assert_eq!(row(&grid, "vendorB")["tier"], 2);
    assert_eq!(row(&grid, "vendorB")["validity"]["passed"], false);
}

#[test]
fn every_grid_format_shows_hardware_and_validity() {
    let out = |format: &str| {
        let out = mlbench()
            .arg("grid")
            .args(vendors().zips())
            .args(["--baseline", "vendorA", "-f", format])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let table = out("table");
    for needle in [
        H100,
        "FAIL 1 error, packed with errors",
        "— (failed validation)",
        "vendorD-node",
    ] {
        assert!(table.contains(needle), "{needle}: {table}");
    }
    let markdown = out("markdown");
    assert!(
        markdown.contains(H100) && markdown.contains("FAIL 12 errors"),
        "{markdown}"
    );
    let csv = out("csv");
    let header = csv.lines().next().unwrap();
    assert!(
        header.ends_with(",valid,errors,gpu_models,gpu_count,hosts,runtime"),
        "{header}"
    );
    let d_overall = csv
        .lines()
        .find(|l| l.starts_with("vendorD,baseline,(overall)"))
        .unwrap();
    assert!(
        d_overall.contains(&format!(",pass,0,{H100},2,vendorD-node,")),
        "{d_overall}"
    );
}

/// The DOM of `page` as headless Chromium renders it, after `scripts/check-html.sh` has
/// judged the page (not blank, no console message, `tables` captioned tables, nothing
/// loaded from outside). `None` without a browser, unless `MLBENCH_REQUIRE_BROWSER` is
/// set (CI sets it): then no browser is a failure.
fn rendered(page: &Path, tables: usize) -> Option<String> {
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
    let dom = page.with_extension("dom.html");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-html.sh");
    let out = std::process::Command::new(script)
        .arg(page)
        .args(["--expect-tables", &tables.to_string(), "--dom"])
        .arg(&dom)
        .env("CHROMIUM", browser)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {said}", page.display());
    Some(std::fs::read_to_string(dom).unwrap())
}

/// The cells of each row of the table captioned `caption` in `dom`, tags stripped.
fn table_rows(dom: &str, caption: &str) -> Vec<Vec<String>> {
    let start = dom
        .find(&format!("<caption>{caption}</caption>"))
        .expect(caption);
    let table = &dom[start..start + dom[start..].find("</table>").unwrap()];
    let text = |cell: &str| {
        let mut out = String::new();
        let mut in_tag = false;
        for c in cell.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.trim().to_owned()
    };
    let rows = table.split("<tr").skip(1);
    rows.map(|r| {
        r.split("<td")
            .skip(1)
            .map(|c| text(&format!("<td{c}")))
            .collect()
    })
    .filter(|cells: &Vec<String>| !cells.is_empty())
    .collect()
}

#[test]
fn pages_in_chromium_show_hardware_runtime_and_one_status_per_submission() {
    let v = vendors();
    let out = tempfile::tempdir().unwrap();
    let grid_page = out.path().join("grid.html");
    mlbench()
        .arg("grid")
        .args(v.zips())
        .args(["--baseline", "vendorA", "--html"])
        .arg(&grid_page)
        .assert()
        .success();
    let Some(dom) = rendered(&grid_page, 3) else {
        return;
    };
    let rows = table_rows(&dom, "Overall, relative to the baseline");
    let runtime = "mila-iqia/training scripts (torch version unknown)";
    for (vendor, gpus, status) in [
        ('A', format!("2 × {EXAMPLE_GPU}"), "pass"),
        (
            'B',
            format!("2 × {EXAMPLE_GPU}"),
            "FAIL 1 error, packed with errors",
        ),
        (
            'C',
            format!("2 × {EXAMPLE_GPU}"),
            "FAIL 12 errors, packed with errors",
        ),
        ('D', format!("2 × {H100}"), "pass"),
    ] {
        let name = format!("vendor{vendor}");
        let row = rows.iter().find(|r| r[0] == name).expect(&name);
        for cell in [gpus.as_str(), &format!("{name}-node"), runtime, status] {
            assert!(
                row.iter().any(|c| c == cell),
                "{name}: no {cell:?} in {row:?}"
            );
        }
        let statuses = (row.iter()).filter(|c| *c == "pass" || c.starts_with("FAIL"));
        assert_eq!(statuses.count(), 1, "{row:?}");
    }
    // vendorB's report page: one status at the top, and it is the failure.
    let report_page = out.path().join("vendorB.html");
    let args = ["--scoring", "score", "--html"];
    mlbench()
        .arg("report")
        .arg(v.zip('B'))
        .args(["-g", "RTX"])
        .args(args)
        .arg(&report_page)
        .assert()
        .success();
    let dom = rendered(&report_page, 5).unwrap();
    assert_eq!(
        dom.matches("✗ FAIL").count() + dom.matches("✓ PASS").count(),
        1
    );
    assert!(dom.contains("✗ FAIL"));
    assert!(dom.contains(&format!("hardware: 2 × {EXAMPLE_GPU} on vendorB-node")));
    assert!(dom.contains(&format!("runtime: {runtime}")));
}

#[test]
fn plots_name_the_hardware_and_runtime_and_set_failing_rows_apart() {
    let v = vendors();
    let out = tempfile::tempdir().unwrap();
    let plot = |args: &[&str], subs: &[PathBuf]| {
        (mlbench().arg("plot").args(args).args(subs))
            .args(["--format", "svg", "--out-dir"])
            .arg(out.path())
            .assert()
            .success();
    };
    plot(&["grid", "--baseline", "vendorA"], &v.zips());
    // Each text of the charts' SVG is a line of its own: the lines, trimmed.
    let svg = |name: &str| -> Vec<String> {
        let text = std::fs::read_to_string(out.path().join(name)).unwrap();
        text.lines().map(|l| l.trim().to_owned()).collect()
    };
    let ratios = svg("grid-ratios.svg");
    for legend in [
        format!("vendorA · 2 × {EXAMPLE_GPU}"),
        format!("vendorB · failed validation · 2 × {EXAMPLE_GPU}"),
        format!("vendorD · 2 × {H100}"),
    ] {
        assert!(ratios.contains(&legend), "no legend {legend}");
    }
    let runtime = "mila-iqia/training scripts (torch version unknown)";
    let every = format!("every submission on {runtime}");
    assert!(ratios.iter().any(|l| l.ends_with(&every)), "{ratios:?}");
    // The failing rows come after every tier, under a heading that says why; no "tier 0".
    let overall = svg("grid-overall.svg");
    let at =
        |text: &str| (overall.iter().position(|l| l == text)).unwrap_or_else(|| panic!("{text}"));
    let order = [
        "tier 1".to_owned(),
        format!("vendorA · 2 × {EXAMPLE_GPU}"),
        "tier 2".to_owned(),
        format!("vendorD · 2 × {H100}"),
        "not tiered: failed validation".to_owned(),
    ];
    let places: Vec<usize> = order.iter().map(|t| at(t)).collect();
    assert!(places.windows(2).all(|w| w[0] < w[1]), "{places:?}");
    assert!(at(&format!("vendorB · failed validation · 2 × {EXAMPLE_GPU}")) > places[4]);
    assert!(!overall.iter().any(|l| l == "tier 0"));
    // A submission's own charts say what it ran on and with.
    plot(&["runs", "-g", "RTX"], &[v.zip('D')]);
    let runs = svg("runs-vendorD.svg");
    let about = format!("2 × {H100} on vendorD-node · {runtime}");
    assert!(runs.contains(&about), "{runs:?}");
}
