//! Board descriptions (`constraints/boards/*.toml`): the pins, transceiver
//! quads and their reference clocks the node flow's XDC and TCL are made
//! from. Lanes name their quad; links may span quads (the default torus
//! needs six lanes, the ZCU102's SFP+ quad has four).
//!
//! `fpga.board` names a built-in board (`zcu102`, `qfdb`) or a `.toml` file
//! of the same shape. A board file may mark a value it does not know as the
//! string `"unknown"` (the QFDB template does); [`load`] refuses such a
//! board, naming every unknown field, so no XDC is ever written with a
//! guessed pin.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// The value a board file uses for a fact it does not know.
pub const UNKNOWN: &str = "unknown";

/// Built-in boards: name and file text.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "zcu102",
        include_str!("../../constraints/boards/zcu102.toml"),
    ),
    ("qfdb", include_str!("../../constraints/boards/qfdb.toml")),
];

/// A board.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Board {
    /// Board name.
    pub name: String,
    /// The FPGA part on it (must equal `fpga.part`).
    pub part: String,
    /// Vivado board part (the PS preset comes from it).
    pub board_part: String,
    /// The transceiver quads the lanes use, each with its reference clock.
    pub quads: Vec<Quad>,
    /// The PL reset input.
    pub reset: Pin,
    /// Transceiver lanes, in link order.
    pub lanes: Vec<Lane>,
}

/// A differential transceiver reference clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefClk {
    /// Pin name (MGTREFCLK…).
    pub pin: String,
    /// P package pin.
    pub p: String,
    /// N package pin.
    pub n: String,
    /// Frequency, MHz.
    pub mhz: f64,
}

/// A transceiver quad.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quad {
    /// Quad name as the Aurora core's CONFIG names it (`Quad_X1Y3`).
    pub name: String,
    /// Its GTHE4_COMMON site.
    pub common: String,
    /// The reference clock its QPLL0 takes.
    pub refclk: RefClk,
}

/// A single-ended pin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// Package pin.
    pub pin: String,
    /// IOSTANDARD.
    pub iostandard: String,
}

/// One transceiver lane (an SFP+ cage on the ZCU102).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lane {
    /// Lane name.
    pub name: String,
    /// The quad it is in (a `quads[].name`).
    pub quad: String,
    /// GTHE4_CHANNEL site.
    pub channel: String,
    /// RX P pin.
    pub rx_p: String,
    /// RX N pin.
    pub rx_n: String,
    /// TX P pin.
    pub tx_p: String,
    /// TX N pin.
    pub tx_n: String,
    /// The optical module's TX_DISABLE pin (LVCMOS33), when the board has
    /// one (a mezzanine's lane does not).
    #[serde(default)]
    pub tx_disable: Option<String>,
}

/// `(x, y)` of a site name ending `_X<x>Y<y>`.
fn site_coords(site: &str) -> Option<(u32, u32)> {
    let xy = site.rsplit_once('_')?.1.strip_prefix('X')?;
    let (x, y) = xy.split_once('Y')?;
    Some((x.parse().ok()?, y.parse().ok()?))
}

impl Lane {
    /// The lane's channel site as the Aurora core's CONFIG names a lane
    /// (`X1Y12` of `GTHE4_CHANNEL_X1Y12`).
    pub fn site_xy(&self) -> &str {
        self.channel
            .rsplit_once('_')
            .map(|(_, xy)| xy)
            .unwrap_or(&self.channel)
    }
}

/// Every field of `v` (dotted path, `lanes[2].rx_p`) whose value is
/// [`UNKNOWN`].
pub fn unknown_fields(v: &toml::Value) -> Vec<String> {
    fn walk(v: &toml::Value, path: String, out: &mut Vec<String>) {
        match v {
            toml::Value::String(s) if s == UNKNOWN => out.push(path),
            toml::Value::Table(t) => {
                for (k, x) in t {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    walk(x, p, out);
                }
            }
            toml::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, format!("{path}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, String::new(), &mut out);
    out
}

/// The board `text` (from `origin`), refused when a field is unknown or
/// the board is not usable for `part`.
pub fn parse(text: &str, origin: &str, part: &str) -> Result<Board> {
    let value: toml::Value =
        toml::from_str(text).with_context(|| format!("fpga.board: reading {origin}"))?;
    let unknown = unknown_fields(&value);
    if !unknown.is_empty() {
        bail!(
            "fpga.board: board {origin} has {} unknown field(s), which must be filled in \
             before it can be used: {}",
            unknown.len(),
            unknown.join(", ")
        );
    }
    let board: Board = value
        .try_into()
        .with_context(|| format!("fpga.board: board {origin} does not have the board shape"))?;
    if board.part != part {
        bail!(
            "fpga.board: board {origin} carries part {:?}, but fpga.part is {part:?}",
            board.part
        );
    }
    if board.lanes.is_empty() {
        bail!("fpga.board: board {origin} has no transceiver lanes (`lanes`)");
    }
    if board.quads.is_empty() {
        bail!("fpga.board: board {origin} has no transceiver quads (`quads`)");
    }
    for (q, quad) in board.quads.iter().enumerate() {
        if !(quad.refclk.mhz > 0.0 && quad.refclk.mhz <= 1000.0) {
            bail!(
                "fpga.board: board {origin}: quads[{q}].refclk.mhz = {} is not in (0, 1000]",
                quad.refclk.mhz
            );
        }
        if board.quads[..q].iter().any(|o| o.name == quad.name) {
            bail!(
                "fpga.board: board {origin}: quads[{q}].name {:?} is listed twice",
                quad.name
            );
        }
        if site_coords(&quad.common).is_none() {
            bail!(
                "fpga.board: board {origin}: quads[{q}].common = {:?} is not a site name \
                 ending in _X<x>Y<y> (GTHE4_COMMON_X1Y3)",
                quad.common
            );
        }
    }
    for (i, lane) in board.lanes.iter().enumerate() {
        let Some(quad) = board.quads.iter().find(|q| q.name == lane.quad) else {
            let names: Vec<&str> = board.quads.iter().map(|q| q.name.as_str()).collect();
            bail!(
                "fpga.board: board {origin}: lanes[{i}].quad = {:?} is not one of the quads ({})",
                lane.quad,
                names.join(", ")
            );
        };
        // A channel belongs to the quad whose common site has its X and
        // its Y / 4 (four channels per quad).
        let (Some((cx, cy)), Some((qx, qy))) =
            (site_coords(&lane.channel), site_coords(&quad.common))
        else {
            bail!(
                "fpga.board: board {origin}: lanes[{i}].channel = {:?} is not a site name \
                 ending in _X<x>Y<y> (GTHE4_CHANNEL_X1Y12)",
                lane.channel
            );
        };
        if cx != qx || cy / 4 != qy {
            bail!(
                "fpga.board: board {origin}: lanes[{i}].channel = {:?} is not in quad {:?} \
                 ({}): a quad's channels are X{qx}Y{}..X{qx}Y{}",
                lane.channel,
                quad.name,
                quad.common,
                4 * qy,
                4 * qy + 3
            );
        }
        if let Some(j) = board.lanes[..i]
            .iter()
            .position(|o| o.channel == lane.channel)
        {
            bail!(
                "fpga.board: board {origin}: lanes[{i}].channel = {:?} is also lanes[{j}]'s",
                lane.channel
            );
        }
    }
    Ok(board)
}

/// The board `fpga.board` names: a built-in name or a path to a `.toml`.
pub fn load(name: &str, part: &str) -> Result<Board> {
    if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name) {
        return parse(text, &format!("`{name}`"), part);
    }
    if name.ends_with(".toml") {
        let text = std::fs::read_to_string(name)
            .with_context(|| format!("fpga.board: cannot read board file {name:?}"))?;
        return parse(&text, &format!("{name:?}"), part);
    }
    let known: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
    bail!(
        "fpga.board: {name:?} is not a built-in board ({}) or a path to a .toml board file",
        known.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const PART: &str = "xczu9eg-ffvb1156-2-e";

    #[test]
    fn zcu102_loads_with_four_sfp_and_two_fmc_lanes() {
        let b = load("zcu102", PART).unwrap();
        assert_eq!(b.lanes.len(), 6);
        assert_eq!(b.quads.len(), 2);
        assert!(b.quads.iter().all(|q| q.refclk.mhz == 156.25));
        assert_eq!(b.lanes[0].site_xy(), "X1Y12");
        assert_eq!(b.lanes[3].site_xy(), "X1Y15");
        assert_eq!(b.lanes[4].site_xy(), "X1Y10");
        assert!(b.lanes[..4].iter().all(|l| l.tx_disable.is_some()));
        assert!(b.lanes[4..].iter().all(|l| l.tx_disable.is_none()));
    }

    #[test]
    fn a_lane_outside_its_quad_or_in_no_quad_is_named() {
        let text = BUILTIN[0]
            .1
            .replacen("GTHE4_CHANNEL_X1Y13", "GTHE4_CHANNEL_X1Y9", 1);
        let e = format!("{:#}", parse(&text, "t", PART).unwrap_err());
        assert!(
            e.contains("lanes[1].channel") && e.contains("Quad_X1Y3"),
            "{e}"
        );
        let text = BUILTIN[0]
            .1
            .replacen("quad = \"Quad_X1Y3\"", "quad = \"Quad_X0Y3\"", 1);
        let e = format!("{:#}", parse(&text, "t", PART).unwrap_err());
        assert!(
            e.contains("lanes[0].quad") && e.contains("Quad_X0Y3"),
            "{e}"
        );
        let text = BUILTIN[0]
            .1
            .replacen("GTHE4_CHANNEL_X1Y13", "GTHE4_CHANNEL_X1Y12", 1);
        let e = format!("{:#}", parse(&text, "t", PART).unwrap_err());
        assert!(
            e.contains("lanes[1].channel") && e.contains("lanes[0]"),
            "{e}"
        );
        let text = BUILTIN[0].1.replacen("mhz = 156.25", "mhz = 0.0", 1);
        let e = format!("{:#}", parse(&text, "t", PART).unwrap_err());
        assert!(e.contains("quads[0].refclk.mhz"), "{e}");
    }

    #[test]
    fn qfdb_template_is_refused_naming_each_unknown_field() {
        let e = format!("{:#}", load("qfdb", PART).unwrap_err());
        for f in [
            "board_part",
            "quads[0].refclk.p",
            "quads[0].common",
            "lanes[2].quad",
            "reset.pin",
            "lanes[0].rx_p",
            "lanes[5].tx_disable",
        ] {
            assert!(e.contains(f), "{f} not named in: {e}");
        }
        assert!(e.contains("fpga.board"), "{e}");
    }

    #[test]
    fn one_unknown_field_is_named_alone() {
        let text = BUILTIN[0].1.replacen("\"C8\"", "\"unknown\"", 1);
        let e = format!("{:#}", parse(&text, "t", PART).unwrap_err());
        assert!(
            e.contains("1 unknown field(s)") && e.contains("quads[0].refclk.p"),
            "{e}"
        );
    }

    #[test]
    fn bad_boards_are_clear_errors() {
        let e = format!("{:#}", load("zcu104", PART).unwrap_err());
        assert!(e.contains("\"zcu104\"") && e.contains("zcu102"), "{e}");
        let e = format!("{:#}", load("zcu102", "xczu9eg-ffvb1156-1-i").unwrap_err());
        assert!(e.contains("fpga.part"), "{e}");
        let text = BUILTIN[0].1.replace("tx_disable", "tx_dis");
        let e = format!("{:#}", parse(&text, "t", PART).unwrap_err());
        assert!(e.contains("tx_dis"), "{e}");
    }
}
