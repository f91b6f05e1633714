//! Where the ranks of a data-parallel copy meet, as `torchrun` describes it to each
//! process: `RANK`, `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT` (and `LOCAL_RANK`, the
//! device on this node). Plain data, so that planning and launching need no libtorch.
use std::time::Duration;

/// A rendezvous variable that does not hold what it must.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "environment variable {variable}={value:?} is not valid for a rank of a data-parallel copy"
)]
pub struct RendezvousError {
    /// The variable.
    pub variable: String,
    /// Its value.
    pub value: String,
}

/// Where the ranks meet: rank 0's store listens on `host:port`, the others connect to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendezvous {
    /// MASTER_ADDR.
    pub host: String,
    /// MASTER_PORT.
    pub port: u16,
    /// This process's rank, 0..world.
    pub rank: usize,
    /// WORLD_SIZE.
    pub world: usize,
    /// How long joining, and then each collective, may wait for the other ranks: past it, a
    /// rank that died or hangs makes the call fail instead of blocking for ever.
    pub timeout: Duration,
}

impl Rendezvous {
    /// The rendezvous `torchrun` describes in the environment: `RANK`, `WORLD_SIZE`,
    /// `MASTER_ADDR`, `MASTER_PORT`. `None` when `WORLD_SIZE` is absent (not a rank of a
    /// distributed copy); an error names a variable that is malformed.
    pub fn from_env(timeout: Duration) -> Result<Option<Self>, RendezvousError> {
        Self::from_vars(|name| std::env::var(name).ok(), timeout)
    }

    /// [`Rendezvous::from_env`] over any source of variables.
    pub fn from_vars(
        var: impl Fn(&str) -> Option<String>,
        timeout: Duration,
    ) -> Result<Option<Self>, RendezvousError> {
        let Some(world) = var("WORLD_SIZE") else {
            return Ok(None);
        };
        let bad = |name: &str, value: &str| RendezvousError {
            variable: name.to_owned(),
            value: value.to_owned(),
        };
        let number =
            |name: &str, value: &str| value.trim().parse::<usize>().map_err(|_| bad(name, value));
        let world = number("WORLD_SIZE", &world)?;
        let rank = var("RANK").unwrap_or_else(|| "0".into());
        let rank = number("RANK", &rank)?;
        let host = var("MASTER_ADDR").unwrap_or_else(|| "127.0.0.1".into());
        let port = var("MASTER_PORT").unwrap_or_else(|| "29500".into());
        let port = port
            .trim()
            .parse::<u16>()
            .map_err(|_| bad("MASTER_PORT", &port))?;
        if world == 0 {
            return Err(bad("WORLD_SIZE", "0"));
        }
        if rank >= world {
            return Err(bad("RANK", &rank.to_string()));
        }
        Ok(Some(Self {
            host,
            port,
            rank,
            world,
            timeout,
        }))
    }
}

/// A port that no process on this host listens on now (the kernel's pick), for a store
/// that a rank about to start will open. Another program could take it in between; the
/// rendezvous then fails with c10d's error, not a hang.
pub fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

impl Rendezvous {
    /// The variables that tell a rank's process where it stands (`LOCAL_RANK` = `local`).
    pub fn vars(&self, local: usize) -> [(&'static str, String); 5] {
        [
            ("RANK", self.rank.to_string()),
            ("WORLD_SIZE", self.world.to_string()),
            ("LOCAL_RANK", local.to_string()),
            ("MASTER_ADDR", self.host.clone()),
            ("MASTER_PORT", self.port.to_string()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<Option<Rendezvous>, RendezvousError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Rendezvous::from_vars(
            |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            Duration::from_secs(5),
        )
    }

    #[test]
    fn the_rendezvous_comes_from_torchruns_variables() {
        assert_eq!(from(&[]).unwrap(), None, "not a rank");
        let r = from(&[
            ("WORLD_SIZE", "4"),
            ("RANK", "3"),
            ("MASTER_ADDR", "node7"),
            ("MASTER_PORT", "29511"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            (r.rank, r.world, r.host.as_str(), r.port),
            (3, 4, "node7", 29511)
        );
        // torchrun's defaults for a single node.
        let r = from(&[("WORLD_SIZE", "1")]).unwrap().unwrap();
        assert_eq!((r.rank, r.host.as_str(), r.port), (0, "127.0.0.1", 29500));
        // What the launcher sets reads back as it was.
        let r = Rendezvous {
            host: "10.0.0.2".into(),
            port: 1234,
            rank: 1,
            world: 3,
            timeout: Duration::from_secs(5),
        };
        let vars = r.vars(0);
        let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(from(&pairs).unwrap(), Some(r));
        for bad in [
            [("WORLD_SIZE", "2"), ("RANK", "2")],
            [("WORLD_SIZE", "two"), ("RANK", "0")],
            [("WORLD_SIZE", "2"), ("MASTER_PORT", "70000")],
        ] {
            let e = from(&bad).unwrap_err().to_string();
            assert!(e.starts_with("environment variable "), "{e}");
        }
    }
}
