//! A file that several readers share, each at its own position: reads are positioned
//! (`pread`), so clones read in parallel without seeking one another. Clones of a
//! `ZipArchive` over it share the parsed central directory and inflate entries on
//! several threads.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

/// A shared handle on an open file with a position of its own.
#[derive(Debug, Clone)]
pub(crate) struct SharedFile {
    file: Arc<File>,
    len: u64,
    pos: u64,
}

impl SharedFile {
    /// Shares `file`, whose length is `len`.
    pub(crate) fn new(file: File, len: u64) -> SharedFile {
        SharedFile {
            file: Arc::new(file),
            len,
            pos: 0,
        }
    }
}

impl Read for SharedFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = read_at(&self.file, buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for SharedFile {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        match target {
            Some(p) => {
                self.pos = p;
                Ok(p)
            }
            None => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "seek before the start of the file",
            )),
        }
    }
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    file.read_at(buf, offset)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    use std::os::windows::fs::FileExt;
    file.seek_read(buf, offset)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn clones_read_and_seek_independently() {
        let mut tmp = tempfile::tempfile().unwrap();
        tmp.write_all(b"0123456789").unwrap();
        let mut a = SharedFile::new(tmp, 10);
        let mut b = a.clone();
        let mut two = [0u8; 2];
        a.seek(SeekFrom::Start(4)).unwrap();
        a.read_exact(&mut two).unwrap();
        assert_eq!(&two, b"45");
        b.read_exact(&mut two).unwrap();
        assert_eq!(&two, b"01");
        assert_eq!(a.seek(SeekFrom::Current(1)).unwrap(), 7);
        a.read_exact(&mut two).unwrap();
        assert_eq!(&two, b"78");
        assert_eq!(b.seek(SeekFrom::End(-1)).unwrap(), 9);
        let mut rest = Vec::new();
        b.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"9");
        assert!(b.seek(SeekFrom::Current(-20)).is_err());
    }
}
