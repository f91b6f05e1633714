//! A JSON value as Python's `json` module sees it.
//!
//! Python keeps the difference between `1` (int) and `1.0` (float), writes non-finite
//! floats as `NaN`/`Infinity`, and keeps objects in insertion order. Reports are written
//! back byte-for-byte, so this type keeps all three, which `serde_json::Value` cannot.

use std::borrow::Cow;

/// One JSON value, with Python's number distinctions.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null` (Python `None`).
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer literal that fits in `i64`.
    Int(i64),
    /// An integer literal beyond `i64`, kept as its digits (Python ints are unbounded).
    BigInt(Box<str>),
    /// A float: any literal with a fraction or exponent, and `NaN`, `Infinity`, `-Infinity`.
    Float(f64),
    /// A string.
    Str(String),
    /// An array.
    List(Vec<Value>),
    /// An object, in the order its keys were read.
    Object(Object),
}

impl Value {
    /// The name of this value's JSON type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Object(_) => "object",
        }
    }

    /// The value as a float, when it is a number (ints convert).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::BigInt(digits) => digits.parse().ok(),
            _ => None,
        }
    }

    /// The value as an integer, when it is an int literal that fits `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The string, when the value is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, when the value is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The list, when the value is one.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(items) => Some(items),
            _ => None,
        }
    }

    /// The object, when the value is one.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.to_owned())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(s)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Int(i)
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Self {
        Value::Float(f)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}
impl From<Object> for Value {
    fn from(o: Object) -> Self {
        Value::Object(o)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Self {
        Value::List(items.into_iter().map(Into::into).collect())
    }
}

/// A JSON object in read order.
///
/// Duplicate keys are kept as read; lookups see the last one and writers keep the first
/// position with the last value, which is what a Python `dict` built by `json.loads` holds.
/// (Checking for duplicates while parsing would cost more than the rest of the parse.)
///
/// Keys the suite writes in every entry are kept as `&'static str` (see
/// [`crate::pyjson::known_field`]): a report holds a million of them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object {
    pairs: Vec<(Cow<'static, str>, Value)>,
}

impl Object {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of `key` (the last one, if the key was read twice).
    pub fn get(&self, key: &str) -> Option<&Value> {
        // The first bytes compared before the rest: most keys of an entry that have the
        // length sought differ there, and are passed over without a call to memcmp.
        let first = key.as_bytes().first();
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k.len() == key.len() && k.as_bytes().first() == first && k == key)
            .map(|(_, v)| v)
    }

    /// Sets `key`, replacing its value in place or appending it.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        let key: String = key.into();
        let value = value.into();
        match self.pairs.iter_mut().rev().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.pairs.push((Cow::Owned(key), value)),
        }
    }

    /// Removes every pair with `key`, returning the value a lookup would have seen.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let mut found = None;
        self.pairs.retain_mut(|(k, v)| {
            if k == key {
                found = Some(std::mem::replace(v, Value::Null));
                false
            } else {
                true
            }
        });
        found
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether the object has no keys.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Keys that were read more than once (a writer slip worth reporting).
    pub fn duplicate_keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = self.pairs.iter().map(|(k, _)| k.as_ref()).collect();
        keys.sort_unstable();
        let mut dups: Vec<&str> = keys
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0])
            .collect();
        dups.dedup();
        dups
    }

    /// Pairs in Python dict order: first position of each key, with its last value.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.pairs
            .iter()
            .enumerate()
            .filter_map(move |(i, (k, _))| {
                let first = self.pairs.iter().position(|(k2, _)| k2 == k) == Some(i);
                first.then(|| (k.as_ref(), self.get(k).unwrap_or(&Value::Null)))
            })
    }

    /// The pairs as they are, when their keys are strictly increasing (so sorted and
    /// unique: what [`Self::sorted`] would give); `None` otherwise.
    pub fn in_order(&self) -> Option<impl Iterator<Item = (&str, &Value)>> {
        self.pairs
            .windows(2)
            .all(|w| key_before(&w[0].0, &w[1].0))
            .then(|| self.pairs.iter().map(|(k, v)| (k.as_ref(), v)))
    }

    /// Pairs sorted by key (code-point order, as Python's `sort_keys=True`), last value per key.
    pub fn sorted(&self) -> Vec<(&str, &Value)> {
        // Python writes its reports with sorted keys: keys already strictly increasing are
        // sorted and unique as they are.
        if let Some(pairs) = self.in_order() {
            return pairs.collect();
        }
        let mut pairs: Vec<(&str, &Value)> =
            self.pairs.iter().map(|(k, v)| (k.as_ref(), v)).collect();
        // A stable sort keeps equal keys in read order; the last of each run wins.
        pairs.sort_by(|a, b| a.0.cmp(b.0));
        let mut out: Vec<(&str, &Value)> = Vec::with_capacity(pairs.len());
        for pair in pairs {
            match out.last_mut() {
                Some(last) if last.0 == pair.0 => *last = pair,
                _ => out.push(pair),
            }
        }
        out
    }

    pub(crate) fn push_raw(&mut self, key: Cow<'static, str>, value: Value) {
        self.pairs.push((key, value));
    }

    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            pairs: Vec::with_capacity(n),
        }
    }
}

/// `a < b`, told by the first bytes where they differ (as an entry's sorted keys mostly
/// do) without the call to `memcmp` that `<` on `str` makes every time.
#[inline(always)]
fn key_before(a: &str, b: &str) -> bool {
    match (a.as_bytes().first(), b.as_bytes().first()) {
        (Some(x), Some(y)) if x != y => x < y,
        _ => a < b,
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Object {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut object = Object::new();
        for (k, v) in iter {
            object.insert(k, v);
        }
        object
    }
}
