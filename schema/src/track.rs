//! The submission track: the rules a submission was run under. One type for every crate
//! (the validator's jobs rule, the grid's rows, `SUBMISSION.json`, the command line).

use serde::{Deserialize, Serialize};

/// The submission track.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Track {
    /// Only the allowed arguments (`--batch-size`, `--num-processes`, `--workers`,
    /// `--cuda`) may change from the baselines.
    #[default]
    Baseline,
    /// Free tuning: anything may change, and every change is listed.
    Tweaked,
}

impl Track {
    /// Both tracks, in order.
    pub const ALL: [Track; 2] = [Track::Baseline, Track::Tweaked];

    /// `baseline` or `tweaked` (the spelling of the command line and of every document).
    pub fn as_str(self) -> &'static str {
        match self {
            Track::Baseline => "baseline",
            Track::Tweaked => "tweaked",
        }
    }
}

impl std::fmt::Display for Track {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a track.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a track (expected `baseline` or `tweaked`)")]
pub struct UnknownTrack(pub String);

impl std::str::FromStr for Track {
    type Err = UnknownTrack;

    fn from_str(s: &str) -> Result<Track, UnknownTrack> {
        Track::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| UnknownTrack(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_text_and_json() {
        for track in Track::ALL {
            assert_eq!(track.as_str().parse::<Track>(), Ok(track));
            assert_eq!(track.to_string(), track.as_str());
            let json = serde_json::to_string(&track).unwrap();
            assert_eq!(json, format!("\"{}\"", track.as_str()));
            assert_eq!(serde_json::from_str::<Track>(&json).unwrap(), track);
        }
        assert_eq!(Track::default(), Track::Baseline);
        assert!(Track::Baseline < Track::Tweaked);
        let err = "Tweaked".parse::<Track>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "`Tweaked` is not a track (expected `baseline` or `tweaked`)"
        );
        assert!(serde_json::from_str::<Track>("\"other\"").is_err());
    }
}
