//! One read buffer per thread, kept from file to file: the report reader and the
//! validator's intake read thousands of files each, and a fresh allocation per file costs
//! a page fault per 4 KiB touched, which on a large submission is as much system time as
//! the reading itself.

use std::cell::RefCell;
use std::io::Read;
use std::path::Path;

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

/// Reads the file at `path` into `buffer`, cleared first (as `std::fs::read` reads it).
pub fn read_file_into(path: &Path, buffer: &mut Vec<u8>) -> std::io::Result<()> {
    buffer.clear();
    std::fs::File::open(path)?.read_to_end(buffer)?;
    Ok(())
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

    #[test]
    fn an_outsized_buffer_is_let_go() {
        with_thread_buffer(|buffer| buffer.reserve(KEEP_UP_TO + 1));
        with_thread_buffer(|buffer| assert!(buffer.capacity() <= KEEP_UP_TO));
    }
}
