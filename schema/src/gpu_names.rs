//! The GPU names entries carry (`gpu`: the CUDA or ROCm device name) and the targets'
//! models they are (`RTX`, `V100`, `MI50`): `--gpu-model` takes either, and `report`
//! says when the entries' GPU is not the targets' model. The table is documented in
//! docs/gpu-models.md; a name it does not know maps to no model.

/// The targets' GPU models, in the order the suite lists them (the built-in tables').
pub const MODELS: &[&str] = &["V100", "MI50", "RTX"];

/// Device names as entries write them, each with the targets' model it is. Matched
/// without regard to case or surrounding spaces.
pub const KNOWN_NAMES: &[(&str, &str)] = &[
    ("TITAN RTX", "RTX"),
    ("NVIDIA TITAN RTX", "RTX"),
    ("Tesla V100-SXM2-16GB", "V100"),
    ("Tesla V100-SXM2-32GB", "V100"),
    ("Tesla V100-PCIE-16GB", "V100"),
    ("Tesla V100-PCIE-32GB", "V100"),
    ("Tesla V100S-PCIE-32GB", "V100"),
    ("Tesla V100-SXM3-32GB", "V100"),
    ("Tesla V100-DGXS-16GB", "V100"),
    ("Tesla V100-DGXS-32GB", "V100"),
    ("Tesla V100-FHHL-16GB", "V100"),
    ("Vega 20", "MI50"),
    ("AMD Radeon Instinct MI50", "MI50"),
    ("AMD Instinct MI50", "MI50"),
    ("Radeon Instinct MI50 32GB", "MI50"),
];

/// The targets' model `name` is: a model itself (`rtx` → `RTX`), or a device name of
/// [`KNOWN_NAMES`] (`TITAN RTX` → `RTX`); `None` for any other name.
pub fn targets_model(name: &str) -> Option<&'static str> {
    let name = name.trim();
    let model = MODELS
        .iter()
        .copied()
        .find(|m| m.eq_ignore_ascii_case(name));
    model.or_else(|| {
        (KNOWN_NAMES.iter())
            .find(|(known, _)| known.eq_ignore_ascii_case(name))
            .map(|(_, model)| *model)
    })
}

/// The name `--gpu-model` is looked up by: the targets' model a known device name is,
/// else the name as given (a targets file may have a column of any name).
pub fn resolve(asked: &str) -> &str {
    targets_model(asked).unwrap_or(asked)
}

/// Whether entries on the device `name` ran on the targets' `model`: the same name, or
/// a device name of that model.
pub fn runs_on(name: &str, model: &str) -> bool {
    name.trim().eq_ignore_ascii_case(model.trim())
        || targets_model(name).is_some_and(|m| m.eq_ignore_ascii_case(model.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_map_to_the_targets_models() {
        assert_eq!(targets_model("TITAN RTX"), Some("RTX"));
        assert_eq!(targets_model(" titan rtx "), Some("RTX"));
        assert_eq!(targets_model("rtx"), Some("RTX"));
        assert_eq!(targets_model("Tesla V100-SXM2-16GB"), Some("V100"));
        assert_eq!(targets_model("Vega 20"), Some("MI50"));
        assert_eq!(targets_model("NVIDIA H100 80GB HBM3"), None);
        assert_eq!(resolve("TITAN RTX"), "RTX");
        assert_eq!(resolve("H100"), "H100");
        assert!(runs_on("TITAN RTX", "RTX"));
        assert!(runs_on("H100", "h100"));
        assert!(!runs_on("NVIDIA H100 80GB HBM3", "RTX"));
        assert!(!runs_on("TITAN RTX", "V100"));
    }

    #[test]
    fn every_known_name_maps_to_a_built_in_model() {
        for (name, model) in KNOWN_NAMES {
            assert!(
                crate::targets::BUILTIN_MODELS.contains(model),
                "{name}: {model}"
            );
            assert_eq!(targets_model(name), Some(*model));
        }
    }
}
