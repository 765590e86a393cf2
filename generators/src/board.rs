//! Board descriptions (`constraints/boards/*.toml`): the pins, transceiver
//! quad and reference clock the node flow's XDC and TCL are made from.
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
    /// Transceiver reference clock.
    pub refclk: RefClk,
    /// The transceiver quad of the lanes.
    pub quad: Quad,
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
    /// The optical module's TX_DISABLE pin (LVCMOS33).
    pub tx_disable: String,
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
    if !(board.refclk.mhz > 0.0 && board.refclk.mhz <= 1000.0) {
        bail!(
            "fpga.board: board {origin}: refclk.mhz = {} is not in (0, 1000]",
            board.refclk.mhz
        );
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
    fn zcu102_loads_with_four_sfp_lanes() {
        let b = load("zcu102", PART).unwrap();
        assert_eq!(b.lanes.len(), 4);
        assert_eq!(b.refclk.mhz, 156.25);
        assert_eq!(b.lanes[0].site_xy(), "X1Y12");
        assert_eq!(b.lanes[3].site_xy(), "X1Y15");
    }

    #[test]
    fn qfdb_template_is_refused_naming_each_unknown_field() {
        let e = format!("{:#}", load("qfdb", PART).unwrap_err());
        for f in [
            "board_part",
            "refclk.p",
            "quad.common",
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
            e.contains("1 unknown field(s)") && e.contains("refclk.p"),
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
