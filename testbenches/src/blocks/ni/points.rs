//! The `ni` bench's parameter points: the registry entry, the default
//! matrix, and `key=value` text to and from [`NiRtlParams`].

use super::NiBench;
use crate::blocks::{check_keys, kv_u64, parse_kv, BlockInfo};
use crate::cosim::Bench;
use anyhow::Result;
use exanet_hdl::ni::NiRtlParams;
use exanet_sim::ni::NiParams;

const KEYS: &[&str] = &[
    "channels",
    "desc_queue_depth",
    "pkt_slots",
    "mailbox_msg_bytes",
    "max_payload_bytes",
    "addr_bits",
    "windows",
    "errq_depth",
    "mailbox_depth",
    "cq_depth",
    "resp_queue_depth",
    "read_queue_depth",
    "poison_depth",
    "buffer_flits",
    "vc",
    "resp_vc",
    "vcs_per_class",
    "tx_ahead",
];

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
    matrix_points()
        .into_iter()
        .map(|t| point(t).expect("matrix point is valid"))
        .collect()
}

fn point(text: &str) -> Result<Box<dyn Bench>> {
    Ok(Box::new(NiBench::new(parse_point(text)?)?))
}

/// Parse a point (`key=value,...`; missing keys take the defaults).
pub fn parse_point(text: &str) -> Result<NiRtlParams> {
    let kv = parse_kv(text)?;
    check_keys(&kv, KEYS)?;
    let d = NiRtlParams::default();
    let int = |k: &str, def: usize| -> Result<usize> { Ok(kv_u64(&kv, k, def as u64)? as usize) };
    let p = NiRtlParams {
        ni: NiParams {
            channels: int("channels", d.ni.channels)?,
            desc_queue_depth: int("desc_queue_depth", d.ni.desc_queue_depth)?,
            pkt_slots: int("pkt_slots", d.ni.pkt_slots)?,
            mailbox_msg_bytes: int("mailbox_msg_bytes", d.ni.mailbox_msg_bytes)?,
            max_payload_bytes: int("max_payload_bytes", d.ni.max_payload_bytes)?,
            addr_bits: int("addr_bits", d.ni.addr_bits as usize)? as u32,
            windows: int("windows", d.ni.windows)?,
            errq_depth: int("errq_depth", d.ni.errq_depth)?,
            mailbox_depth: int("mailbox_depth", d.ni.mailbox_depth)?,
            cq_depth: int("cq_depth", d.ni.cq_depth)?,
            resp_queue_depth: int("resp_queue_depth", d.ni.resp_queue_depth)?,
            read_queue_depth: int("read_queue_depth", d.ni.read_queue_depth)?,
            poison_depth: int("poison_depth", d.ni.poison_depth)?,
        },
        buffer_flits: int("buffer_flits", d.buffer_flits)?,
        vc: int("vc", d.vc)?,
        resp_vc: int("resp_vc", d.resp_vc)?,
        vcs_per_class: int("vcs_per_class", d.vcs_per_class)?,
        tx_ahead: int("tx_ahead", d.tx_ahead)?,
    };
    exanet_hdl::ni::Geometry::new(&p)?;
    Ok(p)
}

/// The point text of `p`.
pub fn point_text(p: &NiRtlParams) -> String {
    let n = &p.ni;
    format!(
        "channels={},desc_queue_depth={},pkt_slots={},mailbox_msg_bytes={},max_payload_bytes={},addr_bits={},windows={},errq_depth={},mailbox_depth={},cq_depth={},resp_queue_depth={},read_queue_depth={},poison_depth={},buffer_flits={},vc={},resp_vc={},vcs_per_class={},tx_ahead={}",
        n.channels, n.desc_queue_depth, n.pkt_slots, n.mailbox_msg_bytes, n.max_payload_bytes,
        n.addr_bits, n.windows, n.errq_depth, n.mailbox_depth, n.cq_depth, n.resp_queue_depth,
        n.read_queue_depth, n.poison_depth, p.buffer_flits, p.vc, p.resp_vc, p.vcs_per_class,
        p.tx_ahead
    )
}
