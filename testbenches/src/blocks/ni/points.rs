//! The `ni` bench's parameter points: the registry entry, the default
//! matrix, and `key=value` text to and from [`NiRtlParams`] (its serde
//! form, through [`exanet_sim::point`]).

use super::NiBench;
use crate::blocks::BlockInfo;
use crate::cosim::Bench;
use anyhow::Result;
use exanet_hdl::ni::NiRtlParams;
use serde::{Deserialize, Serialize};

/// The point text of `p`.
pub fn point_text(p: &NiRtlParams) -> String {
    p.point_text()
}

/// Registry entry for `exanet cosim ni`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "ni",
        about:
            "network interface: transmit side, read service; receive path: checks, rejects, error queue, data writes, completions, mailbox, acks, read requests, responses",
        matrix,
        point,
    }
}

/// Registry entry for `exanet cosim allreduce`: the NI with its allreduce
/// engine (`ar_communicators > 0`) against the golden NI, transaction by
/// transaction, the `ni` bench's traffic plus allreduce descriptors:
/// malformed ones (error completions, nothing written), good ones on a
/// box of one rank (the copy compared burst by burst) and on a box of
/// 2..=32 ranks (fragments compared flit by flit, then TIMEOUT: no partner
/// answers). What the engine RTL does not do yet (descriptors queued
/// behind a running collective) is kept out of the stimulus; see
/// `exanet_hdl::ni::allreduce`.
///
/// Besides the NI's keys, the point takes the bench's own ([`ArStimulus`],
/// 0 = off, the default, or 1): `header_walk=1` (single header upsets
/// walked over all 128 header bits, plus upsets on top of other packets:
/// the `ni` bench's header stimulus) and `reset_readback=1` (registers
/// filled with random values before each mid-run reset and read back
/// after it, compared with a fresh golden model's). The first matrix point
/// has both on.
pub fn allreduce_info() -> BlockInfo {
    BlockInfo {
        name: "allreduce",
        about: "NI with the allreduce engine: descriptor checks, error completions, single-rank copies, a collective's fragments and TIMEOUT, fragments received (checked, counted, written to scratch, combined); bench keys header_walk=1 (header upsets at every bit, corrected or rejected) and reset_readback=1 (registers read back after mid-run resets)",
        matrix: allreduce_matrix,
        point: allreduce_point,
    }
}

/// The allreduce bench's own point keys (stimulus, not the NI's
/// parameters), each 0 (off, the default) or 1 (on). The engine point
/// keeps them off unless asked: its tests' fixed-seed coverage floors
/// were measured on the stimulus without them (session 37).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ArStimulus {
    /// 1: single header errors (damage kinds 52..=63) take the next bit of
    /// the walk over all 128 header bits, and a third of the other packets
    /// get one more walked upset on top (the `ni` bench's header stimulus:
    /// the NI must correct each as the golden model does); 0: a random
    /// bit for those kinds and no extra upsets.
    pub header_walk: u8,
    /// 1: before each mid-run reset, software writes random values into
    /// the channel pages' staged descriptor, PKT_DEST and packetizer
    /// words and into every window but window 0; right after the reset it
    /// reads back those, the channel PDIDs, every window, CONTROL,
    /// MBOX_CTRL, IRQ_ENABLE, TRACE_CTRL and the engine's thresholds and
    /// slots, each compared with a fresh golden model's.
    pub reset_readback: u8,
}

impl ArStimulus {
    /// Both keys on.
    pub const ALL: ArStimulus = ArStimulus {
        header_walk: 1,
        reset_readback: 1,
    };

    /// The point keys this struct takes.
    fn keys() -> Vec<&'static str> {
        vec!["header_walk", "reset_readback"]
    }

    /// Each key 0 or 1; an error names the key and its value.
    fn validate(&self) -> Result<()> {
        for (k, v) in [
            ("header_walk", self.header_walk),
            ("reset_readback", self.reset_readback),
        ] {
            anyhow::ensure!(v <= 1, "point key `{k}` = `{v}`: 0 (off) or 1 (on)");
        }
        Ok(())
    }

    /// The keys that are on, as point text (empty when none is).
    pub fn text(&self) -> String {
        let mut v = Vec::new();
        if self.header_walk != 0 {
            v.push("header_walk=1");
        }
        if self.reset_readback != 0 {
            v.push("reset_readback=1");
        }
        v.join(",")
    }
}

/// Parse an `allreduce` point: the NI's keys ([`NiRtlParams`]) and the
/// bench's own ([`ArStimulus`]); errors name the key and the value.
pub fn parse_allreduce_point(text: &str) -> Result<(NiRtlParams, ArStimulus)> {
    let own = ArStimulus::keys();
    let (mine, ni): (Vec<_>, Vec<_>) = exanet_sim::point::items(text)?
        .into_iter()
        .partition(|(k, _)| own.contains(k));
    let join = |v: &[(&str, &str)]| {
        v.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let s: ArStimulus = exanet_sim::point::parse(&join(&mine))?;
    s.validate()?;
    let p = NiRtlParams::parse_point(&join(&ni)).map_err(|e| {
        anyhow::anyhow!("{e:#} (and the allreduce bench's own: {})", own.join(", "))
    })?;
    anyhow::ensure!(
        p.ni.ar_communicators > 0,
        "ni.ar_communicators = 0: the allreduce bench needs the engine (at least one communicator slot)"
    );
    exanet_hdl::ni::Geometry::new(&p)?;
    Ok((p, s))
}

/// The `allreduce` matrix: the default NI with four communicator slots
/// and two waiting completions, with the header walk and the read-back
/// after resets (the point `exanet mutate allreduce` campaigns by
/// default), and the small NI's 64-byte chunks.
pub fn allreduce_points() -> Vec<String> {
    let m = matrix_points();
    vec![
        format!(
            "{},ar_communicators=4,ar_queue_depth=2,{}",
            m[0],
            ArStimulus::ALL.text()
        ),
        format!("{},ar_communicators=4,ar_queue_depth=1", m[1]),
    ]
}

fn allreduce_matrix() -> Vec<Box<dyn Bench>> {
    allreduce_points()
        .iter()
        .map(|t| allreduce_point(t).unwrap_or_else(|e| panic!("matrix point {t}: {e:#}")))
        .collect()
}

fn allreduce_point(text: &str) -> Result<Box<dyn Bench>> {
    let (p, s) = parse_allreduce_point(text)?;
    let mut b = NiBench::new(p)?;
    b.set_ar_copies(true);
    b.set_ar_stimulus(s);
    Ok(Box::new(b))
}

/// The default matrix.
pub fn matrix_points() -> Vec<&'static str> {
    vec![
        // The default NI: 4 channels, 256-byte packets, 64-byte messages, 2 VCs per class.
        "channels=4,desc_queue_depth=16,pkt_slots=4,mailbox_msg_bytes=64,max_payload_bytes=256,addr_bits=40,windows=8,errq_depth=16,mailbox_depth=16,cq_depth=64,resp_queue_depth=8,read_queue_depth=4,poison_depth=4,buffer_flits=32,vc=0,resp_vc=2,vcs_per_class=2",
        // Small and odd: 3 channels, short queues, 64-byte packets, 32-bit addresses, few credits,
        // 3-entry error queue, mailbox and response queue, 2 read jobs, 5 completions, 3 damaged transfers
        // (queues wrap at non-powers of two and fill up: Busy, mailbox-full nacks, reads refused);
        // 3 VCs per class, requests on the last class-0 VC, responses on the last class-1 VC.
        "channels=3,desc_queue_depth=3,pkt_slots=2,mailbox_msg_bytes=32,max_payload_bytes=64,addr_bits=32,windows=2,errq_depth=3,mailbox_depth=3,cq_depth=5,resp_queue_depth=3,read_queue_depth=2,poison_depth=3,buffer_flits=6,vc=2,resp_vc=5,vcs_per_class=3",
        // One channel, 16-byte packets and messages, 42-bit addresses, 3 credits, every queue
        // one entry deep; one VC per class.
        "channels=1,desc_queue_depth=2,pkt_slots=1,mailbox_msg_bytes=16,max_payload_bytes=16,addr_bits=42,windows=1,errq_depth=1,mailbox_depth=1,cq_depth=1,resp_queue_depth=1,read_queue_depth=1,poison_depth=1,buffer_flits=3,vc=0,resp_vc=1,vcs_per_class=1",
    ]
}

fn matrix() -> Vec<Box<dyn Bench>> {
    crate::blocks::benches_of(matrix_points(), point)
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(NiBench::new(parse_point(text)?)?))
}

/// Parse a point (`key=value,...`; missing keys take the defaults).
pub fn parse_point(text: &str) -> Result<NiRtlParams> {
    let p = NiRtlParams::parse_point(text)?;
    exanet_hdl::ni::Geometry::new(&p)?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_round_trip_and_name_bad_keys_and_values() {
        for t in matrix_points() {
            let p = parse_point(t).unwrap();
            // The text is the matrix point's keys in order, the golden
            // model's allreduce keys (at their defaults: the RTL has no
            // engine), the trace ring's depth and the read-ahead the
            // matrix leaves at their defaults.
            let text = point_text(&p);
            let items = exanet_sim::point::items(&text).unwrap();
            let given: Vec<String> = items
                .iter()
                .filter(|(k, _)| !k.starts_with("ar_") && *k != "torus_dims" && *k != "trace_depth")
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            assert_eq!(given.join(","), format!("{t},tx_ahead={}", p.tx_ahead));
            assert!(items.contains(&("ar_communicators", "0")), "{text}");
            let depth = exanet_sim::ni::NiParams::default().trace_depth.to_string();
            assert!(items.contains(&("trace_depth", depth.as_str())), "{text}");
            assert_eq!(parse_point(&point_text(&p)).unwrap(), p);
        }
        assert_eq!(parse_point("").unwrap(), NiRtlParams::default());
        let e = parse_point("chanels=2").unwrap_err().to_string();
        assert!(e.contains("`chanels`") && e.contains("channels"), "{e}");
        let e = parse_point("addr_bits=x").unwrap_err().to_string();
        assert!(e.contains("`addr_bits`") && e.contains("`x`"), "{e}");
    }

    #[test]
    fn allreduce_points_take_the_engine_and_name_bad_values() {
        for t in allreduce_points() {
            let (p, _) = parse_allreduce_point(&t).unwrap();
            assert_eq!(p.ni.ar_communicators, 4, "{t}");
            assert!(allreduce_point(&t).is_ok(), "{t}");
        }
        let e = allreduce_point("ar_communicators=0")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("ar_communicators = 0"), "{e}");
        let e = allreduce_point("ar_communicators=x")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("`ar_communicators`") && e.contains("`x`"), "{e}");
    }

    #[test]
    fn allreduce_stimulus_keys_parse_round_trip_and_name_bad_values() {
        // The first matrix point has both keys on, the second neither;
        // the bench's point text gives them back (mutate's children and
        // rerun lines take it).
        let pts = allreduce_points();
        let (p0, s0) = parse_allreduce_point(&pts[0]).unwrap();
        assert_eq!(s0, ArStimulus::ALL);
        assert_eq!(
            parse_allreduce_point(&pts[1]).unwrap().1,
            ArStimulus::default()
        );
        let b = allreduce_point(&pts[0]).unwrap();
        assert_eq!(
            b.point(),
            format!("{},header_walk=1,reset_readback=1", point_text(&p0))
        );
        assert_eq!(parse_allreduce_point(&b.point()).unwrap(), (p0.clone(), s0));
        assert_eq!(b.block(), "allreduce");
        // Each key alone, anywhere in the text; 0 is off.
        let (p, s) =
            parse_allreduce_point("reset_readback=1,ar_communicators=2,header_walk=0").unwrap();
        assert_eq!(p.ni.ar_communicators, 2);
        assert_eq!(
            s,
            ArStimulus {
                header_walk: 0,
                reset_readback: 1
            }
        );
        assert_eq!(s.text(), "reset_readback=1");
        assert_eq!(
            allreduce_point("ar_communicators=2,header_walk=0")
                .unwrap()
                .point(),
            point_text(&NiRtlParams::parse_point("ar_communicators=2").unwrap())
        );
        // Bad values name the key and the value; an unknown key lists the
        // bench's own keys too.
        let e = parse_allreduce_point("ar_communicators=4,header_walk=2")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`header_walk`") && e.contains("`2`"), "{e}");
        let e = format!(
            "{:#}",
            parse_allreduce_point("ar_communicators=4,reset_readback=yes").unwrap_err()
        );
        assert!(e.contains("`reset_readback`") && e.contains("`yes`"), "{e}");
        let e = parse_allreduce_point("ar_communicators=4,header_wlak=1")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`header_wlak`") && e.contains("header_walk, reset_readback"),
            "{e}"
        );
        // The `ni` bench has no such keys.
        assert!(parse_point("header_walk=1").is_err());
    }
}
