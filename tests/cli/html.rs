//! `scripts/check-html.py`, the judge behind `scripts/check-html.sh`, on made-up browser
//! output (screenshot, DOM, log): no browser needed. The page builder's own tests are unit
//! tests in `src/render/html.rs`; the browser itself runs in `.ci/run`.

use std::path::Path;
use std::process::{Command, Output};

/// A `width`×`height` RGB PNG, black up to row `ink_rows`, white below (stored deflate).
fn png(width: u32, height: u32, ink_rows: u32) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend(kind);
        out.extend(data);
        let crc = crc32(&out[start..]);
        out.extend(crc.to_be_bytes());
    }
    let mut raw = Vec::new();
    for y in 0..height {
        raw.push(0); // filter: none
        let level = if y < ink_rows { 0 } else { 255 };
        raw.extend(std::iter::repeat_n(level, 3 * width as usize));
    }
    let mut z = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        z.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        z.extend(len.to_le_bytes());
        z.extend((!len).to_le_bytes());
        z.extend(*block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    z.extend(((b << 16) | a).to_be_bytes());
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::new();
    header.extend(width.to_be_bytes());
    header.extend(height.to_be_bytes());
    header.extend([8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &z);
    chunk(&mut out, b"IEND", &[]);
    out
}

const TABLES: &str = "<html><body><table><caption>a</caption></table>\
    <table><caption>b</caption><tr><td>1</td></tr></table></body></html>";

/// Runs the judge on the given screenshot, DOM and log; `None` without python3.
fn judge(dir: &Path, png: &[u8], dom: &str, log: &str, tables: usize) -> Option<Output> {
    let Ok(python) = Command::new("python3").arg("--version").output() else {
        eprintln!("python3 not found: check-html.py not tested");
        return None;
    };
    assert!(python.status.success());
    std::fs::write(dir.join("shot.png"), png).unwrap();
    std::fs::write(dir.join("dom.html"), dom).unwrap();
    std::fs::write(dir.join("chromium.log"), log).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-html.py");
    let out = Command::new("python3")
        .arg(script)
        .args(["shot.png", "dom.html", "chromium.log"])
        .arg(tables.to_string())
        .arg("0.005")
        .current_dir(dir)
        .output()
        .unwrap();
    Some(out)
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn a_page_with_ink_tables_and_a_quiet_console_passes() {
    let dir = tempfile::tempdir().unwrap();
    let log = "[1:1:1123/112532.361440:ERROR:dbus/object_proxy.cc:572] Failed to call method\n";
    let Some(out) = judge(dir.path(), &png(64, 64, 8), TABLES, log, 2) else {
        return;
    };
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("12.50% of pixels inked on #ffffff, 0 console messages, 2 tables"));
}

#[test]
fn a_blank_screenshot_fails() {
    let dir = tempfile::tempdir().unwrap();
    let Some(out) = judge(dir.path(), &png(64, 64, 0), TABLES, "", 2) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("FAIL: the screenshot is blank: 0.000% of its pixels"));
}

#[test]
fn a_console_message_fails() {
    let dir = tempfile::tempdir().unwrap();
    let log = "[2:2:1123/112534.210700:INFO:CONSOLE:1] \"x\", source: file:///p.html (1)\n\
               [2:2:1123/112534.210700:INFO:CONSOLE(7)] \"Uncaught Error: boom\", source: x (7)\n";
    let Some(out) = judge(dir.path(), &png(64, 64, 8), TABLES, log, 2) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let text = text(&out);
    assert!(
        text.contains("FAIL: console: \"x\", source: file:///p.html (1)"),
        "{text}"
    );
    assert!(
        text.contains("FAIL: console: \"Uncaught Error: boom\""),
        "{text}"
    );
}

#[test]
fn missing_tables_captions_scripts_and_outside_references_fail() {
    let dir = tempfile::tempdir().unwrap();
    let dom = "<html><body><table><tr><td>1</td></tr></table><img src=\"https://x/y.png\">\
               <a href=\"#ok\">ok</a><a href=\"http://x\">x</a><script></script></body></html>";
    let Some(out) = judge(dir.path(), &png(64, 64, 8), dom, "", 3) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1));
    let text = text(&out);
    for expected in [
        "FAIL: 1 <table> elements in the rendered page, 3 expected at least",
        "FAIL: table 1 (id None) has no <caption>",
        "FAIL: a reference out of the page: <img src=\"https://x/y.png\">",
        "FAIL: a reference out of the page: <a href=\"http://x\">",
        "FAIL: a <script> element",
    ] {
        assert!(text.contains(expected), "{expected} in {text}");
    }
    assert!(!text.contains("#ok"), "{text}");
}
