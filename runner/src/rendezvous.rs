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
    /// Its rank on its node (`LOCAL_RANK`): the node's device it runs on.
    pub local: usize,
    /// WORLD_SIZE.
    pub world: usize,
    /// How long joining, and then each collective, may wait for the other ranks: past it, a
    /// rank that died or hangs makes the call fail instead of blocking for ever.
    pub timeout: Duration,
}

impl Rendezvous {
    /// The rendezvous of this process, from the environment: torchrun's `RANK`,
    /// `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`; or, when `MLBENCH_RANKS` is
    /// `slurm` (a task of `srun`, [`SLURM_RANKS`]), Slurm's `SLURM_PROCID`, `SLURM_NTASKS`
    /// and `SLURM_LOCALID`, with the master `MASTER_ADDR` or else the first node of
    /// `SLURM_JOB_NODELIST`. `None` when this process is no rank; an error names a variable
    /// that is malformed.
    pub fn from_env(timeout: Duration) -> Result<Option<Self>, RendezvousError> {
        Self::from_vars(|name| std::env::var(name).ok(), timeout)
    }

    /// [`Rendezvous::from_env`] over any source of variables.
    pub fn from_vars(
        var: impl Fn(&str) -> Option<String>,
        timeout: Duration,
    ) -> Result<Option<Self>, RendezvousError> {
        let slurm = var("MLBENCH_RANKS").as_deref() == Some(SLURM_RANKS);
        let [rank_var, world_var, local_var] = if slurm {
            ["SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"]
        } else {
            ["RANK", "WORLD_SIZE", "LOCAL_RANK"]
        };
        let Some(world) = var(world_var) else {
            return Ok(None);
        };
        let bad = |name: &str, value: &str| RendezvousError {
            variable: name.to_owned(),
            value: value.to_owned(),
        };
        let number =
            |name: &str, value: &str| value.trim().parse::<usize>().map_err(|_| bad(name, value));
        let world = number(world_var, &world)?;
        let rank = var(rank_var).unwrap_or_else(|| "0".into());
        let rank = number(rank_var, &rank)?;
        let local = match var(local_var) {
            Some(l) => number(local_var, &l)?,
            None => rank,
        };
        let first_node = || {
            let list = var("SLURM_JOB_NODELIST")?;
            first_host(&list)
        };
        let host = var("MASTER_ADDR")
            .or_else(|| if slurm { first_node() } else { None })
            .unwrap_or_else(|| "127.0.0.1".into());
        let port = var("MASTER_PORT").unwrap_or_else(|| "29500".into());
        let port = port
            .trim()
            .parse::<u16>()
            .map_err(|_| bad("MASTER_PORT", &port))?;
        if world == 0 {
            return Err(bad(world_var, "0"));
        }
        if rank >= world {
            return Err(bad(rank_var, &rank.to_string()));
        }
        Ok(Some(Self {
            host,
            port,
            rank,
            local,
            world,
            timeout,
        }))
    }
}

/// `MLBENCH_RANKS=slurm`: this process is a task of `srun` whose ranks Slurm numbers.
pub const SLURM_RANKS: &str = "slurm";

/// The first host of a Slurm host list: `n1` of `n[1-2]`, `gpu007` of `gpu[007-009,012],x`,
/// `a` of `a,b`. `None` for an empty list.
pub fn first_host(list: &str) -> Option<String> {
    let list = list.trim();
    let end = list.find(',').unwrap_or(list.len());
    let head = match list.find('[') {
        Some(open) if open < end => {
            let inside = &list[open + 1..];
            let first = inside
                .split([',', '-', ']'])
                .next()
                .filter(|n| !n.is_empty())?;
            format!("{}{first}", &list[..open])
        }
        _ => list[..end].to_owned(),
    };
    (!head.is_empty()).then_some(head)
}

/// A port that no process on this host listens on now (the kernel's pick), for a store
/// that a rank about to start will open. Another program could take it in between; the
/// rendezvous then fails with c10d's error, not a hang.
pub fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

impl Rendezvous {
    /// Rank `rank` of a world of `world` on this machine, its store on `port` of the
    /// loopback, on device `rank`.
    pub fn on_this_host(port: u16, rank: usize, world: usize, timeout: Duration) -> Self {
        Self {
            host: "127.0.0.1".into(),
            port,
            rank,
            local: rank,
            world,
            timeout,
        }
    }

    /// The variables that tell a rank's process where it stands, as torchrun sets them.
    pub fn vars(&self) -> [(&'static str, String); 5] {
        [
            ("RANK", self.rank.to_string()),
            ("WORLD_SIZE", self.world.to_string()),
            ("LOCAL_RANK", self.local.to_string()),
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
            local: 0,
            world: 3,
            timeout: Duration::from_secs(5),
        };
        let vars = r.vars();
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

#[cfg(test)]
mod slurm_tests {
    use super::*;

    #[test]
    fn srun_tasks_take_their_rank_from_slurm_and_the_master_from_the_node_list() {
        let vars = [
            ("MLBENCH_RANKS", "slurm"),
            ("SLURM_PROCID", "3"),
            ("SLURM_NTASKS", "4"),
            ("SLURM_LOCALID", "1"),
            ("SLURM_JOB_NODELIST", "gpu[007-008]"),
            ("MASTER_PORT", "4000"),
            // torchrun's variables are not read under srun (a stray RANK is ignored).
            ("RANK", "0"),
        ];
        let get = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        };
        let r = Rendezvous::from_vars(get, Duration::from_secs(1))
            .unwrap()
            .unwrap();
        assert_eq!((r.rank, r.local, r.world), (3, 1, 4));
        assert_eq!((r.host.as_str(), r.port), ("gpu007", 4000));
        // Without the marker, Slurm's variables make no rank (an array task is no world).
        let plain = |name: &str| match name {
            "SLURM_PROCID" => Some("0".to_owned()),
            "SLURM_NTASKS" => Some("1".to_owned()),
            _ => None,
        };
        assert_eq!(
            Rendezvous::from_vars(plain, Duration::from_secs(1)).unwrap(),
            None
        );
    }

    #[test]
    fn first_hosts_of_slurm_host_lists() {
        assert_eq!(first_host("n[1-2]").as_deref(), Some("n1"));
        assert_eq!(first_host("gpu[007-009,012],x").as_deref(), Some("gpu007"));
        assert_eq!(first_host("a,b").as_deref(), Some("a"));
        assert_eq!(first_host("solo").as_deref(), Some("solo"));
        assert_eq!(first_host("rack1-[12,14]").as_deref(), Some("rack1-12"));
        assert_eq!(first_host(""), None);
    }
}
