//! One read buffer per thread, kept from file to file: the report reader and the
//! validator's intake read thousands of files each, and a fresh allocation per file costs
//! a page fault per 4 KiB touched, which on a large submission is as much system time as
//! the reading itself.

use std::cell::RefCell;
use std::io::Read;
use std::path::Path;

/// Reports above this size are read as streams, a window at a time, not
/// whole: memory is then bounded by the largest entry.
pub const STREAM_ABOVE: u64 = 64 << 20;

/// The size above which a report is streamed: [`STREAM_ABOVE`], or the bytes
/// `MLBENCH_STREAM_ABOVE` gives (for the tests, which stream every file with 0 and check
/// that the outputs do not change).
pub fn stream_above() -> u64 {
    static ABOVE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *ABOVE.get_or_init(|| {
        std::env::var("MLBENCH_STREAM_ABOVE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(STREAM_ABOVE)
    })
}

/// Where a report's bytes come from: in memory, or a stream read a window at a time.
pub enum Content<'a> {
    /// The whole file.
    Bytes(&'a [u8]),
    /// A stream (a large file, an entry of a zip).
    Stream(&'a mut dyn std::io::Read),
}

/// The largest buffer a thread keeps for its next file: after an unusually large file the
/// buffer is let go rather than kept alive.
pub const KEEP_UP_TO: usize = 64 << 20;

/// Calls `f` with this thread's read buffer (its contents are whatever the last file
/// left). Re-entered on the same thread (a parallel call inside `f` ran there), `f` gets a
/// buffer of its own.
pub fn with_thread_buffer<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    thread_local! {
        static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    BUFFER.with(|cell| {
        let Ok(mut buffer) = cell.try_borrow_mut() else {
            return f(&mut Vec::new());
        };
        let out = f(&mut buffer);
        if buffer.capacity() > KEEP_UP_TO {
            *buffer = Vec::new();
        }
        out
    })
}

/// Whether [`open_regular`] follows a symbolic link at the path itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// A file named on the command line: a link to a regular file is fine.
    Follow,
    /// A file inside a submission: links are never followed (one could lead anywhere).
    Refuse,
}

/// Opens `path` for reading if it is a regular file: without blocking (a FIFO or a device
/// is refused after the open, which `O_NONBLOCK` keeps from waiting for a writer), and,
/// with [`Links::Refuse`], without following a symbolic link. The one way mlbench opens
/// an input file.
pub fn open_regular(path: &Path, links: Links) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) if links == Links::Refuse => std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a symbolic link: links inside a submission are not followed",
            ),
            _ => e,
        })?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    let what = if kind.is_dir() {
        "a folder"
    } else {
        special_kind(&kind)
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{what}, not a regular file"),
    ))
}

/// Reads a whole regular file (see [`open_regular`]), as `std::fs::read` would.
pub fn read_regular(path: &Path, links: Links) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path, links)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text, as `std::fs::read_to_string` would.
pub fn read_regular_text(path: &Path, links: Links) -> std::io::Result<String> {
    String::from_utf8(read_regular(path, links)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
}

/// Reads the file at `path` into `buffer`, cleared first (as `std::fs::read` reads it).
/// Only a regular file, never through a symbolic link ([`open_regular`]).
///
/// The file is read at the size its metadata gives, straight into the buffer's spare
/// capacity: open, stat, one read, close for a report file (`read_to_end` adds a seek and
/// a read that finds the end, a third more system calls over 1,600 files). A file that
/// grows meanwhile is read up to that size; one that shrinks, up to its end.
pub fn read_file_into(path: &Path, buffer: &mut Vec<u8>) -> std::io::Result<()> {
    buffer.clear();
    let mut file = open_regular(path, Links::Refuse)?;
    let size = file.metadata()?.len();
    match usize::try_from(size) {
        Ok(size) if size > 0 => read_at_most(&mut file, buffer, size),
        // A size of 0 (a file of /proc): read to the end.
        _ => file.read_to_end(buffer).map(drop),
    }
}

/// A reader that keeps the first error it met (the parser of a stream sees the stream
/// end there; the caller learns why).
pub struct Recording<R> {
    inner: R,
    /// Bytes read.
    pub read: u64,
    /// The first read that failed.
    pub failed: Option<std::io::Error>,
}

impl<R> Recording<R> {
    /// Records the reads of `inner`.
    pub fn new(inner: R) -> Self {
        Recording {
            inner,
            read: 0,
            failed: None,
        }
    }
}

impl<R: Read> Read for Recording<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.read += n as u64;
                Ok(n)
            }
            Err(e) => {
                let kind = e.kind();
                if kind != std::io::ErrorKind::Interrupted && self.failed.is_none() {
                    self.failed = Some(std::io::Error::new(kind, e.to_string()));
                }
                Err(e)
            }
        }
    }
}

/// Calls `f` with the content of the regular file at `path` (see [`open_regular`]): its
/// bytes, read into this thread's buffer, or, above [`STREAM_ABOVE`] bytes, a stream of
/// it, so that a large report is never held whole. Returns the file's size and `f`'s
/// result, and the read of the stream that failed, if one did (`f` saw the stream end
/// there). An error is a file that could not be opened or read at all.
///
pub fn with_content<T>(
    path: &Path,
    links: Links,
    f: impl FnOnce(Content<'_>) -> T,
) -> std::io::Result<Contented<T>> {
    let mut file = open_regular(path, links)?;
    let size = file.metadata()?.len();
    if size > stream_above() {
        let mut stream = Recording::new(&mut file);
        let out = f(Content::Stream(&mut stream));
        let failed = stream.failed;
        return Ok(Contented { size, out, failed });
    }
    with_thread_buffer(|buffer| {
        buffer.clear();
        match usize::try_from(size) {
            Ok(size) if size > 0 => read_at_most(&mut file, buffer, size)?,
            _ => drop(file.read_to_end(buffer)?),
        }
        let size = buffer.len() as u64;
        let out = f(Content::Bytes(buffer));
        Ok(Contented {
            size,
            out,
            failed: None,
        })
    })
}

/// What [`with_content`] gives.
pub struct Contented<T> {
    /// The file's size (the bytes read, for a file read whole).
    pub size: u64,
    /// What the reader of the content returned.
    pub out: T,
    /// The read of the stream that failed, if one did.
    pub failed: Option<std::io::Error>,
}

/// Reads up to `size` bytes of `file` onto the end of `buffer`.
#[cfg(unix)]
fn read_at_most(
    file: &mut std::fs::File,
    buffer: &mut Vec<u8>,
    size: usize,
) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    buffer.reserve(size);
    while buffer.len() < size {
        let want = size - buffer.len();
        // SAFETY: the pointer is `want` bytes of the buffer's spare capacity (reserved
        // above: len + want ≤ size ≤ capacity), which read(2) writes and nothing else
        // reads; `set_len` then covers only the `n ≤ want` bytes it wrote.
        let n = unsafe {
            libc::read(
                file.as_raw_fd(),
                buffer.as_mut_ptr().add(buffer.len()).cast(),
                want,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            break;
        }
        // SAFETY: read(2) initialised these n bytes (see above).
        unsafe { buffer.set_len(buffer.len() + n as usize) };
    }
    Ok(())
}

/// Reads up to `size` bytes of `file` onto the end of `buffer`.
#[cfg(not(unix))]
fn read_at_most(
    file: &mut std::fs::File,
    buffer: &mut Vec<u8>,
    size: usize,
) -> std::io::Result<()> {
    file.take(size as u64).read_to_end(buffer).map(drop)
}

/// Whether `path` is named as a zipped submission (`.zip`, any case): every command
/// reads such a file as a zip, and a folder or another file otherwise.
pub fn has_zip_extension(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("zip"))
}

/// What a file type that is neither a file, a folder nor a link is, in words.
pub fn special_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_is_kept_between_calls_and_a_nested_call_gets_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"first file").unwrap();
        std::fs::write(&b, b"2nd").unwrap();
        let first = with_thread_buffer(|buffer| {
            read_file_into(&a, buffer).unwrap();
            assert_eq!(buffer.as_slice(), b"first file");
            buffer.as_ptr()
        });
        with_thread_buffer(|buffer| {
            // The same allocation, refilled: the shorter file leaves nothing of the first.
            read_file_into(&b, buffer).unwrap();
            assert_eq!(buffer.as_slice(), b"2nd");
            assert_eq!(buffer.as_ptr(), first);
            with_thread_buffer(|inner| {
                assert!(inner.is_empty());
                assert_ne!(inner.as_ptr(), first);
            });
        });
        let missing = with_thread_buffer(|buffer| read_file_into(&dir.path().join("c"), buffer));
        assert_eq!(missing.unwrap_err().kind(), std::io::ErrorKind::NotFound);
    }

    /// Files of every size around the buffer's capacity, an empty one, and a folder (an
    /// error), each read whole into a reused buffer.
    #[test]
    fn files_of_any_size_are_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut buffer = Vec::with_capacity(100);
        for len in [0usize, 1, 99, 100, 101, 4096, 70_000, 3] {
            let text: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let path = dir.path().join(format!("f{len}"));
            std::fs::write(&path, &text).unwrap();
            read_file_into(&path, &mut buffer).unwrap();
            assert_eq!(buffer, text, "{len} bytes");
        }
        assert!(read_file_into(dir.path(), &mut buffer).is_err());
    }

    #[test]
    fn an_outsized_buffer_is_let_go() {
        with_thread_buffer(|buffer| buffer.reserve(KEEP_UP_TO + 1));
        with_thread_buffer(|buffer| assert!(buffer.capacity() <= KEEP_UP_TO));
    }
}
