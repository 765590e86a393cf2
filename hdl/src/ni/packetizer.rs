//! `packetizer`: per-channel packetizer windows, message slots and send
//! queues (generated Verilog, part of the `ni` top).
//!
//! PKT_DATA writes fill the channel's window (32-bit registers, reset 0).
//! An accepted PKT_SEND copies the whole window into the lowest free slot
//! in one cycle (slot data are registers: `channels · pkt_slots ·
//! mailbox_msg_bytes` bytes), records length, PKT_DEST and the channel's
//! PDID, marks the slot queued and appends it to the channel's send queue.
//! The scheduler pops the queue head when it picks the message; the slot
//! then awaits its acknowledgement: a MailboxAck (or a final MailboxNack)
//! the receive path accepts frees it, a MailboxNack "full" or "payload
//! CRC" appends it to the channel's send queue again (same bytes).
//! `msg_word` is payload word `jp` of the message the sender is sending
//! (slot `b_slot` of channel `b_c`).

use super::codes::Codes;
use super::geometry::{Geometry, Keys};
use super::vgen::render;
use anyhow::Result;
use askama::Template;

/// `templates/ni/packetizer.v`.
#[derive(Template)]
#[template(path = "ni/packetizer.v")]
struct Packetizer<'a> {
    k: Keys,
    c: &'a Codes,
    /// Last index of the window words (`pw`, 2^cw · 2^mwa).
    pwn: usize,
    /// Last index of the slot words (`ps_data`, 2^cw · 2^sa · 2^mwa).
    psdn: usize,
    /// Last index of the slots (2^cw · 2^sa).
    psn: usize,
    /// Slot storage per channel (2^sa).
    sn: usize,
    /// Window-word storage per channel (2^mwa).
    wn: usize,
}

/// The Verilog of the packetizer.
pub fn verilog(g: &Geometry, c: &Codes) -> Result<String> {
    let nc = 1usize << g.cw;
    let sn = 1usize << g.sa;
    let wn = 1usize << g.mwa;
    render(
        &Packetizer {
            k: g.keys(),
            c,
            pwn: nc * wn - 1,
            psdn: nc * sn * wn - 1,
            psn: nc * sn - 1,
            sn,
            wn,
        },
        "packetizer",
    )
}
