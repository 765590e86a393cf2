//! `trace`: the NI's event trace ring (generated Verilog, part of the `ni`
//! top; none at all when `ni.trace_depth = 0`). The contract — events,
//! their order within a cycle, the 64-bit entry and the registers — is
//! the golden model's [`exanet_sim::ni::trace`]; every code, field slice
//! and register offset here comes from there.
//!
//! Structure: up to [`LANES`] events a cycle, compacted in the golden
//! order into consecutive entries; the ring is [`LANES`] banks of
//! distributed RAM (`trace_depth / 4` entries of 63 bits each), entry `n`
//! in bank `n mod 4`, so the (at most four) entries of one cycle fall in
//! different banks and each bank takes one write a cycle. Events past the
//! fourth of a cycle count in TRACE_DROPS. The trace only observes: no
//! signal of the NI depends on it except the register read data.
//!
//! Event sources (lanes, in order): the receive decision (`x_commit`:
//! PKT_IN or REJECT), its completion (`cq_wr`), a data write's B
//! (`w_land` of a landing-queue entry marked `data`), the completion that
//! B posts (`lp_cq`), a DOORBELL (`a_db`) or a mailbox pop (`mb_pop`:
//! both register writes, so one lane), a tail flit on `out_*` (`ov_q &&
//! ot_q`; the packet type is kept from the footer's send, `tr_opt`). A
//! pop's txid is the head message's (kept in the mailbox metadata,
//! `mb_hm`), or the one pushed in the same cycle into an empty mailbox.

use super::codes::{Codes, Lit};
use super::geometry::{clog2, Geometry};
use super::records::Records;
use super::vgen::{pad, render, Bits, Word};
use anyhow::Result;
use askama::Template;
use exanet_sim::ni::trace::{self as gt, EventCode, LANES};
use exanet_sim::packet::coords::Field;
use exanet_sim::packet::footer;
use exanet_sim::packet::header::PacketType;

/// `templates/ni/trace.v`.
#[derive(Template)]
#[template(path = "ni/trace.v")]
struct TraceV {
    /// Entry index bits (`log2(trace_depth)`), and their top.
    ia: usize,
    iam1: usize,
    /// Entries per bank, minus one.
    bdm1: usize,
    /// Entry bits.
    ew: usize,
    /// The six lanes' entries (concatenation bodies).
    ents: Vec<String>,
    /// Register offsets.
    r_ctrl: Lit,
    r_depth: Lit,
    r_count: Lit,
    r_drops: Lit,
    r_idx: Lit,
    r_lo: Lit,
    r_hi: Lit,
    /// TRACE_CTRL bits.
    b_enable: Bits,
    b_clear: Bits,
    /// TRACE_IDX's index bits of a written word.
    b_idx: Bits,
    /// TRACE_CTRL as read.
    ctrl_word: String,
    /// TRACE_DEPTH as read.
    depth: Lit,
    /// `ia - 3` zero bits: a rank widened to an entry index.
    s_pad: String,
    /// Zero bits in front of TRACE_IDX and TRACE_HI.
    idx_pad: String,
    hi_pad: String,
    /// `trace_depth`, decimal.
    depth_n: usize,
    /// Slices of a landing-queue entry: the data mark, the valid bits,
    /// the completion's and the response's txid.
    lq_data: Bits,
    lq_cqv: Bits,
    lq_rqv: Bits,
    lq_cq_txid: Bits,
    lq_rq_txid: Bits,
    /// The response queue entry's packet type.
    rq_ptype: Bits,
    /// The mailbox metadata's txid.
    mb_txid: Bits,
}

fn bits(f: Field, marked: bool) -> Bits {
    Bits::new(f.offset as usize, f.width as usize, f.name, marked)
}

/// The Verilog of the trace, or nothing when `ni.trace_depth = 0`.
pub fn verilog(g: &Geometry, c: &Codes, r: &Records, marked: bool) -> Result<String> {
    let depth = g.p.ni.trace_depth;
    if depth == 0 {
        return Ok(String::new());
    }
    let ia = clog2(depth);
    let ew = (gt::CODE.offset + gt::CODE.width) as usize;
    let code = |e: EventCode, name| Lit::new(gt::CODE.width as usize, e as u64, name, marked);
    let off = |o: u32, name| Lit::new(12, o as u64, name, marked);
    let w = |f: Field| f.width as usize;
    // One entry: time now, then the fields.
    let ent = |code: String,
               chan: (String, usize),
               txid: String,
               info: (String, usize),
               detail: (String, usize)| {
        Word::new(ew)
            .put(bits(gt::TIME, marked), "tr_now", 32)
            .put(bits(gt::TXID, marked), txid, w(gt::TXID))
            .put(bits(gt::INFO, marked), info.0, info.1)
            .put(bits(gt::DETAIL, marked), detail.0, detail.1)
            .put(bits(gt::CHAN, marked), chan.0, chan.1)
            .put(bits(gt::CODE, marked), code, w(gt::CODE))
            .text()
    };
    let cq = &r.cq;
    // A field of a record inside a record (at `outer`).
    let inner = |outer: &Bits, f: Bits, name| Bits::new(outer.lsb + f.lsb, f.width, name, marked);
    let in_lq = |name: &str| r.lq.at(name);
    let cq_at = |base: Option<&Bits>, name: &'static str| match base {
        Some(o) => inner(o, cq.at(name), name),
        None => cq.at(name),
    };
    let lq_cq = in_lq("cq");
    let cq_ent = |src: &str, base: Option<&Bits>| {
        let (t, k, s) = (
            cq_at(base, "txid"),
            cq_at(base, "kind"),
            cq_at(base, "status"),
        );
        ent(
            code(EventCode::CqPosted, "ev.cq_posted").to_string(),
            ("1'b0".into(), 1),
            format!("{src}{t}"),
            (format!("{src}{k}"), k.width),
            (format!("{src}{s}"), s.width),
        )
    };
    let mb_class = Lit::new(
        w(gt::CHAN),
        PacketType::Mailbox.class() as u64,
        "class.mailbox",
        marked,
    );
    let db_op = exanet_sim::ni::descriptor::CTRL_OP;
    let db_txid = exanet_sim::ni::descriptor::CTRL_TXID;
    let ents = vec![
        // 0: the receive decision.
        ent(
            format!(
                "(x_accept ? {} : {})",
                code(EventCode::PktIn, "ev.pkt_in"),
                code(EventCode::Reject, "ev.reject")
            ),
            ("rx_cls".into(), 1),
            "((x_accept || x_fok) ? footer_unpack$txid : 14'd0)".into(),
            ("((x_accept || x_hok) ? x_pt : 5'd0)".into(), 5),
            (
                format!(
                    "(x_accept ? footer_unpack$flags{} : x_reason)",
                    Bits::new(0, 4, "flags_low", marked)
                ),
                4,
            ),
        ),
        // 1: its completion.
        cq_ent("x_cq_ent", None),
        // 2: a data write landed.
        ent(
            code(EventCode::WriteLanded, "ev.write_landed").to_string(),
            ("1'b0".into(), 1),
            "tr_wl_txid".into(),
            ("1'b0".into(), 1),
            ("{tr_wl_rq, tr_wl_cq}".into(), 2),
        ),
        // 3: the completion it posts (MEM_ERROR on an error B).
        cq_ent("lp_cq_ent", None),
        // 4: a DOORBELL, or else (the other register write) a mailbox pop.
        format!(
            "a_db ? {{{}}} : {{{}}}",
            ent(
                code(EventCode::Doorbell, "ev.doorbell").to_string(),
                ("w_ch".into(), g.cw),
                format!("st_ctrl[w_ch]{}", bits(db_txid, marked)),
                (format!("st_ctrl[w_ch]{}", bits(db_op, marked)), w(db_op)),
                ("db_code".into(), 4),
            ),
            ent(
                code(EventCode::MboxPop, "ev.mbox_pop").to_string(),
                (mb_class.to_string(), mb_class.width),
                "tr_mb_txid".into(),
                (c.pt.mailbox.to_string(), c.pt.mailbox.width),
                ("4'd0".into(), 4),
            )
        ),
        // 5: a tail flit out.
        ent(
            code(EventCode::PktOut, "ev.pkt_out").to_string(),
            ("ol_q".into(), 1),
            format!("od_q{}", bits(footer::TXID, marked)),
            ("tr_opt".into(), 5),
            (
                format!(
                    "od_q{}",
                    Bits::new(footer::FLAGS.offset as usize, 4, "flags_low", marked)
                ),
                4,
            ),
        ),
    ];
    let ctrl_word = Word::new(32)
        .put(bits(gt::CTRL_WRAPPED, marked), "tr_wrap", 1)
        .put(bits(gt::CTRL_ENABLE, marked), "tr_en", 1)
        .text();
    render(
        &TraceV {
            ia,
            iam1: ia - 1,
            bdm1: depth / LANES - 1,
            ew,
            ents,
            r_ctrl: off(gt::TRACE_CTRL, "reg.trace_ctrl"),
            r_depth: off(gt::TRACE_DEPTH, "reg.trace_depth"),
            r_count: off(gt::TRACE_COUNT, "reg.trace_count"),
            r_drops: off(gt::TRACE_DROPS, "reg.trace_drops"),
            r_idx: off(gt::TRACE_IDX, "reg.trace_idx"),
            r_lo: off(gt::TRACE_LO, "reg.trace_lo"),
            r_hi: off(gt::TRACE_HI, "reg.trace_hi"),
            b_enable: bits(gt::CTRL_ENABLE, marked),
            b_clear: bits(gt::CTRL_CLEAR, marked),
            b_idx: Bits::new(0, ia, "trace_idx", marked),
            ctrl_word,
            depth: Lit::new(32, depth as u64, "trace_depth", false),
            s_pad: pad(ia - 3),
            idx_pad: pad(32 - ia),
            hi_pad: pad(64 - ew),
            depth_n: depth,
            lq_data: in_lq("data"),
            lq_cqv: in_lq("cq_v"),
            lq_rqv: in_lq("rq_v"),
            lq_cq_txid: inner(&lq_cq, cq.at("txid"), "txid"),
            lq_rq_txid: inner(&in_lq("rq"), r.rq.at("txid"), "txid"),
            rq_ptype: r.rq.at("ptype"),
            mb_txid: r.mb.at("txid"),
        },
        "trace",
    )
}

#[cfg(test)]
mod tests {
    use crate::emit::assert_lint_clean;
    use crate::ni::{emit_ni, NiRtlParams};

    /// `ni.trace_depth = 0` leaves no trace hardware; the smallest ring
    /// (two entries a bank) and a deep one lint clean, the banks sized.
    #[test]
    fn trace_depths_emit_as_specified() {
        let mut p = NiRtlParams::default();
        p.ni.trace_depth = 0;
        let e = emit_ni(&p).unwrap();
        assert!(!e.text().contains("tr_bank") && !e.text().contains("tr_now"));
        for (d, bank) in [(8, "[0:1]"), (1024, "[0:255]")] {
            p.ni.trace_depth = d;
            let e = emit_ni(&p).unwrap();
            let decl = format!("tr_bank3 {bank};");
            assert!(e.text().contains(&decl), "depth {d}: no `{decl}`");
            assert_lint_clean(&e);
        }
    }
}
