//! The register map for software (`OUT/regs/`), made from the golden
//! models' own decoders, so it cannot drift from the NI and link_status
//! RTL (which are co-simulated against those models):
//!
//! - every NI register is found by running [`exanet_sim::ni::regs::decode`]
//!   over the NI's pages; its name is the decoded register, its field
//!   layout the model's `Field` constants and status bits, its reason
//!   codes [`RejectReason::ALL`];
//! - every link_status register by [`exanet_sim::link::status::decode`].
//!
//! Written: `exanet_ni.rdl` and `exanet_link_status.rdl` (SystemRDL 2.0,
//! compiled by `systemrdl-compiler` in the tests), `exanet_regs.h` (C),
//! `exanet_regs.md` (documentation), `exanet_ni.dtsi` (device tree).

use crate::node_flow::{REGS_BASE, REGS_RANGE};
use anyhow::{bail, Result};
use exanet_sim::link::status;
use exanet_sim::link::LinkState;
use exanet_sim::ni::errors::RejectReason;
use exanet_sim::ni::regs::{self, Reg};
use exanet_sim::ni::NiParams;
use exanet_sim::node::LINK_STATUS_BASE;
use std::fmt::Write;

/// One field of a register.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldEntry {
    /// Name (lower case).
    pub name: String,
    /// Least significant bit.
    pub lsb: u32,
    /// Width in bits.
    pub width: u32,
}

/// One 32-bit register.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegEntry {
    /// Name (upper-case identifier).
    pub name: String,
    /// Byte offset in its block.
    pub offset: u32,
    /// Reached only by privileged accesses (AxPROT\[0\] = 1).
    pub privileged: bool,
    /// Fields, low to high; one `value[31:0]` field when the model names none.
    pub fields: Vec<FieldEntry>,
}

/// `HeaderEcc` → `HEADER_ECC`, `Win(0, BaseLo)` → `WIN_0_BASE_LO`.
pub fn ident(debug: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in debug.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
    }
    out.trim_end_matches('_').to_string()
}

fn field(f: &exanet_sim::packet::coords::Field) -> FieldEntry {
    FieldEntry {
        name: f.name.to_string(),
        lsb: f.offset,
        width: f.width,
    }
}

fn bit(name: &str, mask: u32) -> FieldEntry {
    FieldEntry {
        name: name.to_string(),
        lsb: mask.trailing_zeros(),
        width: 1,
    }
}

/// The fields the model defines for `r`.
fn fields_of(r: &Reg) -> Vec<FieldEntry> {
    let mut f = match r {
        Reg::Control => vec![field(&regs::CONTROL_TX_ENABLE)],
        Reg::MboxCtrl => vec![field(&regs::MBOX_CTRL_PDID), field(&regs::MBOX_CTRL_OPEN)],
        // IRQ_ENABLE has one enable per STATUS bit, at the same place.
        Reg::Status | Reg::IrqEnable => vec![
            bit("rx_error", regs::ST_RX_ERROR),
            bit("errq_overflow", regs::ST_ERRQ_OVERFLOW),
            bit("track_lost", regs::ST_TRACK_LOST),
            bit("hdr_corrected", regs::ST_HDR_CORRECTED),
            bit("axi_error", regs::ST_AXI_ERROR),
            bit("cq_nonempty", regs::ST_CQ_NONEMPTY),
            bit("mb_nonempty", regs::ST_MB_NONEMPTY),
            bit("errq_nonempty", regs::ST_ERRQ_NONEMPTY),
        ],
        Reg::ChPdidPriv(_) => vec![field(&regs::CH_PDID_BITS)],
        Reg::Win(_, regs::WinField::BaseHi) => vec![field(&regs::WIN_BASE_HI_BITS)],
        Reg::Win(_, regs::WinField::SizeHi) => vec![field(&regs::WIN_SIZE_HI_BITS)],
        Reg::Win(_, regs::WinField::Ctrl) => {
            vec![field(&regs::WIN_CTRL_PDID), field(&regs::WIN_CTRL_ENABLE)]
        }
        Reg::ChStatus(_) => vec![
            field(&regs::CH_STATUS_DESC_FREE),
            field(&regs::CH_STATUS_PKT_FREE),
        ],
        _ => vec![FieldEntry {
            name: "value".into(),
            lsb: 0,
            width: 32,
        }],
    };
    f.sort_by_key(|x| x.lsb);
    f
}

/// The NI's registers for `ni`, in address order.
pub fn ni_registers(ni: &NiParams) -> Vec<RegEntry> {
    let end = regs::ch_page(ni.channels);
    (0..end)
        .step_by(4)
        .filter_map(|a| {
            let r = regs::decode(a, ni)?;
            let name = match r {
                Reg::Rej(code) => match RejectReason::from_code(code) {
                    Some(reason) => format!("REJ_{}", ident(&format!("{reason:?}"))),
                    None => format!("REJ_{code}"),
                },
                _ => ident(&format!("{r:?}")),
            };
            Some(RegEntry {
                name,
                offset: a,
                privileged: r.privileged(),
                fields: fields_of(&r),
            })
        })
        .collect()
}

/// The link_status block's registers for `links` links, in address order.
pub fn link_status_registers(links: usize) -> Vec<RegEntry> {
    (0..(links * status::LINK_STRIDE) as u32)
        .step_by(4)
        .filter_map(|a| {
            let (l, r) = status::decode(a, links)?;
            Some(RegEntry {
                name: format!("LINK{l}_{}", r.name().to_ascii_uppercase()),
                offset: a,
                privileged: false,
                fields: vec![FieldEntry {
                    name: "value".into(),
                    lsb: 0,
                    width: 32,
                }],
            })
        })
        .collect()
}

fn rdl(block: &str, desc: &str, regs: &[RegEntry]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// SystemRDL 2.0 register map of {block}; generated by exanet {} from the\n\
         // golden model's register decoder: do not edit.\naddrmap {block} {{\n    \
         name = \"{block}\";\n    desc = \"{desc}\";\n    default regwidth = 32;\n    \
         default sw = rw;\n    default hw = rw;",
        env!("CARGO_PKG_VERSION")
    );
    for r in regs {
        let _ = writeln!(s, "    reg {{");
        if r.privileged {
            let _ = writeln!(
                s,
                "        desc = \"Privileged access only (AxPROT[0] = 1).\";"
            );
        }
        for f in &r.fields {
            let _ = writeln!(
                s,
                "        field {{}} {}[{}:{}];",
                f.name,
                f.lsb + f.width - 1,
                f.lsb
            );
        }
        let _ = writeln!(s, "    }} {} @ 0x{:X};", r.name, r.offset);
    }
    s.push_str("};\n");
    s
}

fn c_block(s: &mut String, prefix: &str, regs: &[RegEntry]) {
    for r in regs {
        let _ = writeln!(s, "#define {prefix}{} 0x{:04X}u", r.name, r.offset);
        for f in r.fields.iter().filter(|f| f.width < 32) {
            let n = format!("{prefix}{}_{}", r.name, f.name.to_ascii_uppercase());
            let mask = ((1u64 << f.width) - 1) << f.lsb;
            let _ = writeln!(s, "#define {n}_SHIFT {}u", f.lsb);
            let _ = writeln!(s, "#define {n}_MASK 0x{mask:08X}u");
        }
    }
}

fn c_header(ni: &[RegEntry], ls: &[RegEntry]) -> String {
    let mut s = format!(
        "/* exanet register map; generated by exanet {} from the golden models'\n \
         * register decoders: do not edit. Offsets are bytes from each block's base. */\n\
         #ifndef EXANET_REGS_H\n#define EXANET_REGS_H\n\n\
         /* Base of the NI's register window in the PS address map (M_AXI_HPM0_FPD). */\n\
         #define EXANET_NI_BASE 0x{REGS_BASE:08X}u\n#define EXANET_NI_SIZE 0x{REGS_RANGE:X}u\n\n\
         /* NI registers */\n",
        env!("CARGO_PKG_VERSION")
    );
    c_block(&mut s, "EXANET_NI_", ni);
    s.push_str("\n/* NI reject reason codes (REJ_* counters, error-queue entries) */\n");
    for r in RejectReason::ALL {
        let _ = writeln!(
            s,
            "#define EXANET_NI_REASON_{} {}u",
            ident(&format!("{r:?}")),
            r.code()
        );
    }
    let _ = writeln!(
        s,
        "\n/* link_status registers (one block of counters per network link), at\n \
         * EXANET_LINK_STATUS_OFFSET in the NI's window (the node's AXI4-Lite split). */\n\
         #define EXANET_LINK_STATUS_OFFSET 0x{LINK_STATUS_BASE:04X}u\n\
         #define EXANET_LINK_STATUS_BASE (EXANET_NI_BASE + EXANET_LINK_STATUS_OFFSET)\n\
         /* bytes between one link's registers and the next link's */\n\
         #define EXANET_LINK_STATUS_STRIDE 0x{:X}u",
        status::LINK_STRIDE
    );
    c_block(&mut s, "EXANET_LINK_STATUS_", ls);
    s.push_str("\n/* link state codes (LINK<l>_STATE) */\n");
    for st in [LinkState::Down, LinkState::Training, LinkState::Up] {
        let _ = writeln!(
            s,
            "#define EXANET_LINK_STATE_{} {}u",
            ident(&format!("{st:?}")),
            st as u32
        );
    }
    s.push_str("\n#endif /* EXANET_REGS_H */\n");
    s
}

fn markdown(ni: &[RegEntry], ls: &[RegEntry]) -> String {
    let mut s = format!(
        "# exanet registers\n\nGenerated by exanet {} from the golden models' register \
         decoders. 32-bit registers, byte offsets. The NI's window is at 0x{REGS_BASE:08X} \
         (0x{REGS_RANGE:X} bytes) in the PS address map.\n",
        env!("CARGO_PKG_VERSION")
    );
    for (title, regs) in [("NI", ni), ("link_status", ls)] {
        let at = if title == "NI" {
            "Offsets from the window's base.".to_string()
        } else {
            format!(
                "At offset 0x{LINK_STATUS_BASE:04X} of the window (the node's AXI4-Lite split \
                 sends 0x{LINK_STATUS_BASE:04X} and up here); offsets below are from there. \
                 Read-only: a write, or a read past the last link, answers SLVERR. STATE: {}.",
                [LinkState::Down, LinkState::Training, LinkState::Up]
                    .iter()
                    .map(|st| format!("{} {st:?}", *st as u32))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let _ = writeln!(
            s,
            "\n## {title}\n\n{at}\n\n| offset | register | privileged | fields |\n|---|---|---|---|"
        );
        for r in regs {
            let fields: Vec<String> = r
                .fields
                .iter()
                .map(|f| format!("{}[{}:{}]", f.name, f.lsb + f.width - 1, f.lsb))
                .collect();
            let _ = writeln!(
                s,
                "| 0x{:04X} | {} | {} | {} |",
                r.offset,
                r.name,
                if r.privileged { "yes" } else { "no" },
                fields.join(", ")
            );
        }
    }
    s.push_str("\n## NI reject reasons\n\n| code | reason |\n|---|---|\n");
    for r in RejectReason::ALL {
        let _ = writeln!(s, "| {} | {} |", r.code(), ident(&format!("{r:?}")));
    }
    s
}

/// The device-tree fragment of the NI: its register window and its
/// interrupt (pl_ps_irq0\[0\], GIC SPI 89 on the ZynqMP: IRQ 121 − 32).
fn dtsi() -> String {
    format!(
        "/* exanet NI; generated by exanet {}: do not edit. */\n\
         / {{\n\tamba_pl: amba_pl@0 {{\n\t\t#address-cells = <2>;\n\t\t#size-cells = <2>;\n\
         \t\tcompatible = \"simple-bus\";\n\t\tranges;\n\
         \t\texanet_ni: exanet-ni@{:x} {{\n\t\t\tcompatible = \"exanet,ni-1.0\";\n\
         \t\t\treg = <0x0 0x{:08x} 0x0 0x{:x}>;\n\t\t\tinterrupt-parent = <&gic>;\n\
         \t\t\tinterrupts = <0 89 4>;\n\t\t}};\n\t}};\n}};\n",
        env!("CARGO_PKG_VERSION"),
        REGS_BASE,
        REGS_BASE,
        REGS_RANGE
    )
}

/// The files of `OUT/regs/` for an NI of `ni` and `links` network links.
pub fn files(ni: &NiParams, links: usize) -> Result<Vec<(String, String)>> {
    let nr = ni_registers(ni);
    let span = u64::from(regs::ch_page(ni.channels));
    if span > LINK_STATUS_BASE || LINK_STATUS_BASE >= REGS_RANGE {
        bail!(
            "ni.channels = {}: the NI's registers need 0x{span:X} bytes, beyond 0x{LINK_STATUS_BASE:X} \
             where link_status's page of the node's 0x{REGS_RANGE:X}-byte AXI4-Lite window starts",
            ni.channels
        );
    }
    let ls = link_status_registers(links);
    Ok(vec![
        (
            "regs/exanet_ni.rdl".into(),
            rdl("exanet_ni", "exanet network interface", &nr),
        ),
        (
            "regs/exanet_link_status.rdl".into(),
            rdl(
                "exanet_link_status",
                &format!(
                    "exanet link status counters, at offset 0x{LINK_STATUS_BASE:X} of the node's \
                     AXI4-Lite window; read-only"
                ),
                &ls,
            ),
        ),
        ("regs/exanet_regs.h".into(), c_header(&nr, &ls)),
        ("regs/exanet_regs.md".into(), markdown(&nr, &ls)),
        ("regs/exanet_ni.dtsi".into(), dtsi()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert_eq!(ident("HeaderEcc"), "HEADER_ECC");
        assert_eq!(ident("Win(0, BaseLo)"), "WIN_0_BASE_LO");
        assert_eq!(ident("Params(3)"), "PARAMS_3");
    }

    #[test]
    fn ni_map_follows_the_model_constants() {
        let ni = NiParams::default();
        let r = ni_registers(&ni);
        let at = |n: &str| r.iter().find(|x| x.name == n).map(|x| x.offset);
        assert_eq!(at("ID"), Some(regs::ID));
        assert_eq!(at("STATUS"), Some(regs::STATUS));
        assert_eq!(at("REJ_HEADER_ECC"), Some(regs::REJ_BASE + 4));
        let names: std::collections::BTreeSet<&str> = r.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names.len(), r.len(), "register names are unique");
        // Fields never overlap and fit in 32 bits.
        for x in &r {
            let mut used = 0u64;
            for f in &x.fields {
                let m = ((1u64 << f.width) - 1) << f.lsb;
                assert_eq!(used & m, 0, "{} {}", x.name, f.name);
                assert!(f.lsb + f.width <= 32);
                used |= m;
            }
        }
        let h = c_header(&r, &link_status_registers(4));
        assert!(h.contains(&format!("#define EXANET_NI_STATUS 0x{:04X}u", regs::STATUS)));
        assert!(h.contains("#define EXANET_NI_REASON_WRONG_CLASS 11u"));
        assert!(h.contains("#define EXANET_LINK_STATUS_LINK3_CTRL_CRC_ERRORS"));
        // Every counter of every link has a register, one stride apart.
        assert!(h.contains("#define EXANET_LINK_STATUS_STRIDE 0x40u"), "{h}");
        assert!(
            h.contains("#define EXANET_LINK_STATUS_LINK3_RX_OVERFLOWS 0x00FCu"),
            "{h}"
        );
        assert_eq!(link_status_registers(4).len(), 4 * status::REGS_PER_LINK);
    }
}
