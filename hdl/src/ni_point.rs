//! The serde form of [`NiRtlParams`]: the parameter point of `exanet cosim
//! ni` and of the `ni` top in `OUT/manifest.json`, through
//! [`exanet_sim::point`].
//!
//! A remote derive, because `ni/top.rs` is being reworked on another
//! branch; when that lands, this becomes `#[derive(Serialize, Deserialize)]`
//! on `NiRtlParams` itself and [`NiPoint`] goes. The compiler checks the
//! mirror: a field added to `NiRtlParams` and not here fails to build.

use crate::ni::NiRtlParams;
use anyhow::Result;
use exanet_sim::ni::NiParams;
use serde::{Deserialize, Serialize};

/// Mirror of [`NiRtlParams`] for serde (field for field, same order).
#[derive(Serialize, Deserialize)]
#[serde(remote = "NiRtlParams", deny_unknown_fields)]
struct NiRtlParamsDef {
    ni: NiParams,
    buffer_flits: usize,
    vc: usize,
    resp_vc: usize,
    vcs_per_class: usize,
    tx_ahead: usize,
}

/// [`NiRtlParams`] as a serde type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NiPoint(#[serde(with = "NiRtlParamsDef")] pub NiRtlParams);

/// The point text of `p`: the golden model's keys, then the RTL's.
pub fn point_text(p: &NiRtlParams) -> String {
    exanet_sim::point::to_text(&NiPoint(p.clone()))
}

/// Parse point text (keys not given keep the defaults).
pub fn parse_point(text: &str) -> Result<NiRtlParams> {
    Ok(exanet_sim::point::parse::<NiPoint>(text)?.0)
}
