//! The machines as one table: a row per property, a column per machine or submission.

use super::Rows;
use mlbench_results::report::SystemInfo;

/// One property of a machine, as a cell.
type Property<'a> = &'a dyn Fn(&SystemInfo) -> Option<String>;

/// The property rows of `columns` (a name, and the machines it stands for: one host, or
/// a submission's nodes, whose differing values are joined with ` / `). `None` when no
/// column has a machine.
pub fn system_rows(title: &str, columns: &[(String, Vec<&SystemInfo>)]) -> Option<Rows> {
    if columns.iter().all(|(_, s)| s.is_empty()) {
        return None;
    }
    let gib = |b: u64| format!("{:.1} GiB", b as f64 / f64::from(1u32 << 30));
    let gpus = |s: &SystemInfo| {
        let gpus: Vec<&str> = s
            .devices
            .iter()
            .filter(|d| d.kind == "cuda")
            .map(|d| d.name.as_str())
            .collect();
        match gpus.first() {
            None => format!("{} CPU shares", s.devices.len()),
            Some(first) if gpus.iter().all(|g| g == first) => format!("{}× {first}", gpus.len()),
            Some(_) => gpus.join(", "),
        }
    };
    let driver = |s: &SystemInfo| {
        let found: Vec<&str> = s
            .devices
            .iter()
            .filter_map(|d| d.driver.as_deref())
            .collect();
        found.first().map(|d| (*d).to_owned())
    };
    let hosts = |s: &SystemInfo| Some(s.hostname.clone());
    let cpu = |s: &SystemInfo| s.cpu.clone();
    let cores = |s: &SystemInfo| Some(s.cores.to_string());
    let memory = |s: &SystemInfo| s.memory_bytes.map(gib);
    let devices = |s: &SystemInfo| Some(gpus(s));
    let os = |s: &SystemInfo| s.os.clone();
    let kernel = |s: &SystemInfo| s.kernel.clone();
    let libtorch = |s: &SystemInfo| s.libtorch.clone();
    let cuda = |s: &SystemInfo| s.cuda.clone();
    let cudnn = |s: &SystemInfo| s.cudnn.clone();
    let tool = |s: &SystemInfo| {
        Some(match &s.commit {
            Some(c) => format!("{} ({c})", s.tool),
            None => s.tool.clone(),
        })
    };
    let properties: [(&str, Property); 12] = [
        ("hosts", &hosts),
        ("CPU", &cpu),
        ("cores", &cores),
        ("memory", &memory),
        ("devices", &devices),
        ("driver", &driver),
        ("OS", &os),
        ("kernel", &kernel),
        ("libtorch", &libtorch),
        ("CUDA", &cuda),
        ("cuDNN", &cudnn),
        ("tool", &tool),
    ];
    let join = |values: Vec<String>| {
        let mut distinct: Vec<String> = Vec::new();
        for v in values {
            if !distinct.contains(&v) {
                distinct.push(v);
            }
        }
        if distinct.is_empty() {
            "—".to_owned()
        } else {
            distinct.join(" / ")
        }
    };
    let rows = properties
        .iter()
        .map(|(name, f)| {
            let mut row = vec![(*name).to_owned()];
            row.extend(
                columns
                    .iter()
                    .map(|(_, m)| join(m.iter().filter_map(|s| f(s)).collect())),
            );
            row
        })
        .collect();
    let mut header = vec!["property".to_owned()];
    header.extend(columns.iter().map(|(name, _)| name.clone()));
    Some(Rows {
        title: title.to_owned(),
        header,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(host: &str, driver: &str) -> SystemInfo {
        use mlbench_results::report::DeviceInfo;
        SystemInfo {
            hostname: host.into(),
            cpu: Some("EPYC".into()),
            cores: 16,
            memory_bytes: Some(64 << 30),
            devices: vec![DeviceInfo {
                kind: "cuda".into(),
                name: "H100".into(),
                driver: Some(driver.into()),
                ..DeviceInfo::default()
            }],
            tool: "mlbench 0.1.0".into(),
            ..SystemInfo::default()
        }
    }

    #[test]
    fn one_column_per_submission_and_differences_joined() {
        let (a, b) = (node("n1", "550"), node("n2", "535"));
        let t = system_rows(
            "System",
            &[("A".into(), vec![&a, &b]), ("B".into(), Vec::new())],
        )
        .unwrap();
        assert_eq!(t.header, ["property", "A", "B"]);
        let row = |name: &str| t.rows.iter().find(|r| r[0] == name).unwrap().clone();
        assert_eq!(row("hosts"), ["hosts", "n1 / n2", "—"]);
        assert_eq!(row("driver"), ["driver", "550 / 535", "—"]);
        assert_eq!(row("memory"), ["memory", "64.0 GiB", "—"]);
        assert_eq!(row("devices"), ["devices", "1× H100", "—"]);
        assert_eq!(row("CPU"), ["CPU", "EPYC", "—"]);
        assert_eq!(t.rows[3][0], "memory", "memory follows cores");
        assert!(system_rows("System", &[("A".into(), Vec::new())]).is_none());
    }
}
