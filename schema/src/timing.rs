//! The suite's timing statistics (docs/suite.md#statstream), exactly: `StatStream` with the first
//! observations dropped, and the throughput `train_item` derived from the `train` stage.

use crate::value::{Object, Value};

/// `StatStream(drop_first_obs)` from benchutils, with its quirks kept:
/// the average and sd (population, ddof 0) cover observations `drop+1..N`, while min and
/// max also include observation `drop`; with fewer than `drop` observations the average
/// is 0 and min/max stay ±infinity.
#[derive(Debug, Clone)]
pub struct StatStream {
    drop: u64,
    cc: u64,
    first: f64,
    sum: f64,
    sumsq: f64,
    min: f64,
    max: f64,
    last: f64,
}

impl StatStream {
    /// A stream dropping the first `drop` observations (the suite uses 10).
    pub fn new(drop: u64) -> Self {
        StatStream {
            drop,
            cc: 0,
            first: 0.0,
            sum: 0.0,
            sumsq: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            last: 0.0,
        }
    }

    /// Adds one observation.
    pub fn update(&mut self, v: f64) {
        self.cc += 1;
        self.last = v;
        if self.cc < self.drop {
            return;
        }
        if self.count() == 1 {
            // Set at cc = drop and again at cc = drop + 1: both have count 1.
            self.first = v;
            self.sum = 0.0;
            self.sumsq = 0.0;
        }
        let x = v - self.first;
        self.sum += x;
        self.sumsq += x * x;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// `max(N - drop, 1)`.
    pub fn count(&self) -> u64 {
        self.cc.saturating_sub(self.drop).max(1)
    }

    /// Mean of the kept observations (0 before `drop` observations).
    pub fn avg(&self) -> f64 {
        if self.cc < self.drop {
            return 0.0;
        }
        self.sum / self.count() as f64 + self.first
    }

    /// Population standard deviation of the kept observations.
    pub fn sd(&self) -> f64 {
        if self.cc < self.drop {
            return 0.0;
        }
        let n = self.count() as f64;
        let mean = self.sum / n;
        (self.sumsq / n - mean * mean).max(0.0).sqrt()
    }

    /// Smallest observation from the `drop`-th on.
    pub fn min(&self) -> f64 {
        self.min
    }

    /// Largest observation from the `drop`-th on.
    pub fn max(&self) -> f64 {
        self.max
    }

    /// The most recent observation.
    pub fn last(&self) -> f64 {
        self.last
    }

    /// The stage object the suite writes: `{avg, count, max, min, sd, unit: "s"}`.
    pub fn to_stage(&self) -> Object {
        let mut o = Object::new();
        o.insert("avg", self.avg());
        o.insert("count", self.count() as i64);
        o.insert("max", self.max());
        o.insert("min", self.min());
        o.insert("sd", self.sd());
        o.insert("unit", "s");
        o
    }
}

/// `train_item` from a `train` stage (docs/suite.md#throughput): items = batch_size × number;
/// avg = items / train.avg, min = items / train.max, max = items / train.min.
pub fn train_item(batch_size: i64, number: i64, train: &StatStream) -> Object {
    let items = (batch_size * number) as f64;
    let avg = items / train.avg();
    let min = items / train.max();
    let max = items / train.min();
    let mut o = Object::new();
    o.insert("avg", Value::Float(avg));
    o.insert("max", Value::Float(max));
    o.insert("min", Value::Float(min));
    o.insert("range", Value::Float(max - min));
    o.insert("unit", "items/sec");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_first_ten_for_mean_but_not_for_min_max() {
        let mut s = StatStream::new(10);
        // Observations 1..=15: kept for avg/sd are 11..=15; min/max see 10..=15.
        for v in 1..=15 {
            s.update(v as f64);
        }
        assert_eq!(s.count(), 5);
        assert_eq!(s.avg(), 13.0);
        assert_eq!(s.sd(), 2f64.sqrt()); // population sd of 11..15
        assert_eq!(s.min(), 10.0);
        assert_eq!(s.max(), 15.0);
    }

    #[test]
    fn edge_cases() {
        let mut s = StatStream::new(10);
        for v in 1..=10 {
            s.update(v as f64);
        }
        assert_eq!((s.count(), s.avg(), s.sd()), (1, 10.0, 0.0));
        let mut s = StatStream::new(10);
        s.update(1.0);
        assert_eq!(s.avg(), 0.0);
        assert_eq!(s.min(), f64::INFINITY);
        assert_eq!(s.max(), f64::NEG_INFINITY);
    }

    #[test]
    fn throughput_as_seed_000() {
        // The seed README: 32 · 5 / 10.0329… = 15.9475
        let mut s = StatStream::new(0);
        s.update(10.032922506332397);
        let item = train_item(32, 5, &s);
        let avg = item.get("avg").unwrap().as_f64().unwrap();
        assert!((avg - 15.947496843418666).abs() < 1e-12);
    }
}
