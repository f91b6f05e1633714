//! The one piece of markup a page takes from outside: inline SVG, made inert.

/// Strips what could run from an SVG: `<script>` elements, `on*` attributes and
/// `javascript:` links; comments, `<?xml …?>` and `<!DOCTYPE …>` go too. `None` when
/// the text is not an `<svg>` element or still mentions `<script` afterwards.
pub fn sanitize_svg(svg: &str) -> Option<String> {
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(lt) = rest.find('<') {
        out.push_str(&rest[..lt]);
        rest = &rest[lt..];
        if rest.starts_with("<!--") {
            rest = skip_to(&rest[4..], "-->");
        } else if rest.starts_with("<![CDATA[") {
            let end = rest.find("]]>").map_or(rest.len(), |i| i + 3);
            out.push_str(&rest[..end]);
            rest = &rest[end..];
        } else if rest.starts_with("<?") || rest.starts_with("<!") {
            rest = skip_to(rest, ">");
        } else {
            let (tag, name, after) = clean_tag(rest);
            rest = after;
            if name == "script" {
                if !tag.ends_with("/>") {
                    let lower = rest.to_ascii_lowercase();
                    rest = lower
                        .find("</script")
                        .map_or("", |i| skip_to(&rest[i..], ">"));
                }
            } else {
                out.push_str(&tag);
            }
        }
    }
    out.push_str(rest);
    let trimmed = out.trim();
    let lower = trimmed.to_ascii_lowercase();
    let is_svg = lower.starts_with("<svg") && lower.ends_with("</svg>");
    (is_svg && !lower.contains("<script")).then(|| trimmed.to_owned())
}

/// What follows the first `end` in `text`, or nothing.
fn skip_to<'a>(text: &'a str, end: &str) -> &'a str {
    text.find(end).map_or("", |i| &text[i + end.len()..])
}

/// Reads one tag at the start of `text` (which starts with `<`): the tag without its
/// dangerous attributes, its lower-case name (`/name` for an end tag), and the rest.
fn clean_tag(text: &str) -> (String, String, &str) {
    let bytes = text.as_bytes();
    let mut i = 1;
    while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'>' {
        if bytes[i] == b'/' && i > 1 {
            break;
        }
        i += 1;
    }
    let name = text[1..i].to_ascii_lowercase();
    let mut tag = text[..i].to_owned();
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        match bytes.get(i) {
            None => return (tag, name, ""),
            Some(b'>') => {
                tag.push('>');
                return (tag, name, &text[i + 1..]);
            }
            Some(b'/') => {
                tag.push('/');
                i += 1;
                continue;
            }
            Some(_) => {}
        }
        let start = i;
        while i < bytes.len() && !b" \t\r\n/>=".contains(&bytes[i]) {
            i += 1;
        }
        let attr = text[start..i].to_ascii_lowercase();
        let mut value = "";
        let mut j = i;
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        if bytes.get(j) == Some(&b'=') {
            j += 1;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            let v0 = j;
            match bytes.get(j) {
                Some(&q @ (b'"' | b'\'')) => {
                    j = text[j + 1..]
                        .find(q as char)
                        .map_or(bytes.len(), |k| j + k + 2);
                }
                _ => {
                    while j < bytes.len() && !bytes[j].is_ascii_whitespace() && bytes[j] != b'>' {
                        j += 1;
                    }
                }
            }
            value = &text[v0..j];
            i = j;
        }
        // Browsers ignore blanks and control characters in a URL's scheme.
        let url: String = value
            .chars()
            .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control() && !"\"'".contains(*c))
            .collect();
        let script_link =
            attr.ends_with("href") && url.to_ascii_lowercase().starts_with("javascript:");
        if !attr.starts_with("on") && !script_link && !attr.is_empty() {
            tag.push(' ');
            tag.push_str(&text[start..i]);
        }
        if i == start {
            i += 1; // a stray `=`: skip it
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_loses_scripts_and_handlers() {
        let svg = "<?xml version=\"1.0\"?>\n<!-- c --><SVG width=\"10\" onLoad=\"x()\" \
                   onclick='y()'><g ONMOUSEOVER=z><a href=\" javascript:alert(1)\" \
                   xlink:href=\"#ok\"><rect/></a></g><Script type=\"x\">alert(1)</SCRIPT>\
                   <script/><text>1 &lt; 2</text></SVG>";
        let clean = sanitize_svg(svg).unwrap();
        assert_eq!(
            clean,
            "<SVG width=\"10\"><g><a xlink:href=\"#ok\"><rect/></a></g><text>1 &lt; 2</text></SVG>"
        );
        let kept = "<svg viewBox=\"0 0 1 1\"><path d=\"M0 0\" stroke-width=\"1\"/></svg>";
        assert_eq!(sanitize_svg(kept).unwrap(), kept);
    }

    #[test]
    fn svg_that_is_not_plain_is_refused() {
        assert_eq!(sanitize_svg("<p>hello</p>"), None);
        assert_eq!(sanitize_svg("<svg><rect></svg><p>after</p>"), None);
        assert_eq!(sanitize_svg("<svg><script>"), None);
        // A name that only starts like `script` is not a script, but still refused.
        assert_eq!(sanitize_svg("<svg><scriptx>1</scriptx></svg>"), None);
    }

    #[test]
    fn text_and_odd_markup_survive_or_are_cut_cleanly() {
        let text = "<svg><text x=\"1\">é ü 中 &amp; 1 &lt; 2</text><g/></svg>";
        assert_eq!(sanitize_svg(text).unwrap(), text);
        // An unterminated script swallows the rest: nothing of it survives.
        assert_eq!(sanitize_svg("<svg><script>alert(1)</svg>"), None);
        let cdata = "<svg><style><![CDATA[ .a { fill: red } ]]></style></svg>";
        assert_eq!(sanitize_svg(cdata).unwrap(), cdata);
        let unquoted = "<svg onload=alert(1) width=10><rect\nonclick = \"x\" y=2 /></svg>";
        assert_eq!(
            sanitize_svg(unquoted).unwrap(),
            "<svg width=10><rect y=2/></svg>"
        );
    }

    /// Made-up markup from tricky pieces: never a panic, never a script, and a second pass
    /// finds nothing left to strip (no handler, no `javascript:` link).
    #[test]
    fn arbitrary_text_never_panics_and_comes_out_clean() {
        let pieces: Vec<&str> = "<|>|/|svg|script|SCRIPT|\"|'|=| |\n|on|load|click|é|中|<!--|-->|\
                                 <![CDATA[|]]>|href|javascript:|<?|<!|x"
            .split('|')
            .collect();
        let mut state = 0x2545_f491_u64;
        for _ in 0..20_000 {
            let mut text = String::from("<svg ");
            for _ in 0..(state % 24) {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                text.push_str(pieces[(state >> 33) as usize % pieces.len()]);
            }
            text.push_str("</svg>");
            if let Some(clean) = sanitize_svg(&text) {
                let lower = clean.to_ascii_lowercase();
                assert!(!lower.contains("<script"), "{text:?} -> {clean:?}");
                assert_eq!(
                    sanitize_svg(&clean).as_deref(),
                    Some(clean.as_str()),
                    "{text:?}"
                );
            }
        }
    }
}
