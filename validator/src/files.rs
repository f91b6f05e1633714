//! The files a validation goes through, however they are held: an [`Intake`] in memory,
//! or a [`Listing`] read as the validation goes.

use crate::finding::of_fact;
use mlbench_results::validation::Finding;
use mlbench_schema::reader::Content;
use mlbench_submission::intake::{ReadFailure, Settled};
use mlbench_submission::{Intake, Listing};
use rayon::prelude::*;
use std::borrow::Cow;

/// The files a validation goes through: an [`Intake`] in memory, or a [`Listing`] read as
/// the validation goes.
pub(crate) trait FileSource: Sync {
    /// Number of files.
    fn count(&self) -> usize;
    /// The path of file `i` (the files are sorted by path).
    fn path(&self, i: usize) -> &str;
    /// What the intake found so far.
    fn intake_findings(&self) -> Vec<Finding>;
    /// Calls `f` on the content of each file of `which` (its bytes, or a stream of a
    /// large file), in parallel, as soon as it is read; each result with the file's length.
    fn each<T: Send>(
        &self,
        which: &[usize],
        f: impl Fn(usize, Content<'_>) -> T + Sync,
    ) -> Vec<Result<(u64, T), ReadFailure>>;
    /// The bytes of each file of `which`, whole, to hold on to.
    fn hold(&self, which: &[usize]) -> Vec<Result<Cow<'_, [u8]>, ReadFailure>>;
    /// See [`Listing::settle`].
    fn settle(&self, outcomes: &[(usize, Result<u64, &ReadFailure>)]) -> Settled;
}

impl FileSource for Intake {
    fn count(&self) -> usize {
        self.files.len()
    }

    fn path(&self, i: usize) -> &str {
        &self.files[i].path
    }

    fn intake_findings(&self) -> Vec<Finding> {
        self.facts.iter().map(of_fact).collect()
    }

    fn each<T: Send>(
        &self,
        which: &[usize],
        f: impl Fn(usize, Content<'_>) -> T + Sync,
    ) -> Vec<Result<(u64, T), ReadFailure>> {
        which
            .par_iter()
            .map(|&i| {
                let bytes = &self.files[i].bytes;
                Ok((bytes.len() as u64, f(i, Content::Bytes(bytes))))
            })
            .collect()
    }

    fn hold(&self, which: &[usize]) -> Vec<Result<Cow<'_, [u8]>, ReadFailure>> {
        which
            .iter()
            .map(|&i| Ok(Cow::Borrowed(self.files[i].bytes.as_slice())))
            .collect()
    }

    /// Files in memory have been read: nothing fails.
    fn settle(&self, _outcomes: &[(usize, Result<u64, &ReadFailure>)]) -> Settled {
        Settled::default()
    }
}

impl FileSource for Listing {
    fn count(&self) -> usize {
        self.paths().len()
    }

    fn path(&self, i: usize) -> &str {
        &self.paths()[i]
    }

    fn intake_findings(&self) -> Vec<Finding> {
        self.facts().map(of_fact).collect()
    }

    fn each<T: Send>(
        &self,
        which: &[usize],
        f: impl Fn(usize, Content<'_>) -> T + Sync,
    ) -> Vec<Result<(u64, T), ReadFailure>> {
        self.read_each_content(which, f)
    }

    fn hold(&self, which: &[usize]) -> Vec<Result<Cow<'_, [u8]>, ReadFailure>> {
        self.read_each(which, false, |_, buffer| Cow::Owned(std::mem::take(buffer)))
    }

    fn settle(&self, outcomes: &[(usize, Result<u64, &ReadFailure>)]) -> Settled {
        Listing::settle(self, outcomes)
    }
}
