#!/usr/bin/env bash
# Renders an HTML page in headless Chromium and fails unless it looks like a page:
# a screenshot that is not blank, no console message, enough tables, each with a
# caption, no script and nothing loaded from outside the page (docs/html.md).
#
# Usage: scripts/check-html.sh FILE.html [--expect-tables N] [--min-ink FRACTION]
#                              [--screenshot OUT.png] [--dom OUT.html] [--site DIR]
#        scripts/check-html.sh --self-test   (the check must fail on a blank page and on
#                                             a console error: CI runs this first)
# Exit 0: looks right; 1: a check failed (each problem on its own line); 2: usage or no
# browser. CHROMIUM=/path/to/chromium picks the browser (default: chromium in PATH).
set -euo pipefail

usage() {
    sed -n 's/^# \{0,1\}//; 6,9p' "$0" >&2
    exit 2
}

# Two pages the check must reject, each for its own reason.
self_test() {
    local dir status out
    dir=$(mktemp -d)
    printf '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>blank</title></head><body></body></html>\n' >"$dir/blank.html"
    {
        printf '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>console</title></head><body>\n'
        printf '<h1>A page with a console error</h1><table><caption>t</caption><tr><td>%s</td></tr></table>\n' \
            "$(printf 'lorem ipsum %.0s' $(seq 1 400))"
        printf '<script>console.error("x")</script></body></html>\n'
    } >"$dir/console.html"
    for case in "blank:the screenshot is blank" 'console:console: "x"'; do
        status=0
        out=$("$0" "$dir/${case%%:*}.html" --expect-tables 0 2>&1) || status=$?
        if [ "$status" -ne 1 ] || ! grep -qF "FAIL: ${case#*:}" <<<"$out"; then
            printf '%s\n' "$out" >&2
            echo "check-html: self-test FAILED: ${case%%:*}.html was not rejected for '${case#*:}'" >&2
            rm -rf "$dir"
            exit 1
        fi
        echo "check-html: self-test: ${case%%:*}.html rejected, as it must be:"
        grep '^  FAIL: ' <<<"$out"
    done
    rm -rf "$dir"
    exit 0
}

page="" expect_tables=0 min_ink=0.005 screenshot="" dom="" site=()
while [ $# -gt 0 ]; do
    case "$1" in
        --expect-tables) expect_tables="${2:?--expect-tables needs a number}"; shift 2 ;;
        --min-ink) min_ink="${2:?--min-ink needs a fraction}"; shift 2 ;;
        --screenshot) screenshot="${2:?--screenshot needs a path}"; shift 2 ;;
        --dom) dom="${2:?--dom needs a path}"; shift 2 ;;
        # A page of a static site in DIR: its links to the site's other files are allowed
        # (and must each name a file inside DIR); every load is still refused.
        --site) site=("${2:?--site needs a folder}"); shift 2 ;;
        --self-test) self_test ;;
        -h|--help) usage ;;
        -*) echo "check-html: unknown option $1" >&2; usage ;;
        *) [ -z "$page" ] || usage; page="$1"; shift ;;
    esac
done
[ -n "$page" ] || usage
case "$expect_tables" in ''|*[!0-9]*) echo "check-html: --expect-tables takes a whole number" >&2; exit 2 ;; esac
[ -f "$page" ] || { echo "check-html: no such file: $page" >&2; exit 2; }

browser="${CHROMIUM:-}"
if [ -z "$browser" ]; then
    browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
fi
[ -n "$browser" ] || { echo "check-html: no chromium (apt-get install -y chromium)" >&2; exit 2; }

page_abs="$(cd "$(dirname "$page")" && pwd)/$(basename "$page")"
screenshot="${screenshot:-${page_abs%.html}.png}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run: screenshot, DOM and log. A fresh profile, no scrollbars (they would be ink),
# and no network beyond the file (the page's own CSP blocks loads anyway).
rm -f "$screenshot"
status=0
timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --hide-scrollbars --no-first-run --no-default-browser-check --disable-extensions \
    --user-data-dir="$work/profile" --run-all-compositor-stages-before-draw \
    --enable-logging=stderr --v=0 --window-size=1280,2000 \
    --screenshot="$screenshot" --dump-dom "file://$page_abs" \
    >"$work/dom.html" 2>"$work/chromium.log" || status=$?
if [ "$status" -ne 0 ] || [ ! -s "$screenshot" ]; then
    echo "check-html: FAIL: $page: chromium exited with $status and no screenshot; its log:" >&2
    grep -v -e dbus -e 'unexpected operator' "$work/chromium.log" | tail -20 >&2
    exit 1
fi

echo "check-html: $page (screenshot: $screenshot)"
# The DOM as Chromium rendered it, for a caller to read what the page shows.
[ -z "$dom" ] || cp "$work/dom.html" "$dom"
if python3 "$(dirname "$0")/check-html.py" "$screenshot" "$work/dom.html" "$work/chromium.log" \
    "$expect_tables" "$min_ink" ${site[@]+"${site[@]}" "$page"}; then
    echo "check-html: OK"
else
    status=$?
    [ "$status" -eq 1 ] || exit 2
    echo "check-html: FAIL: $page" >&2
    exit 1
fi
