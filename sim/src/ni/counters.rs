//! Event counters (registers at CNT_BASE and REJ_BASE; 32-bit wrapping in
//! the registers, 64-bit here).

use super::errors::RejectReason;
use super::regs::cnt;

/// Every counter the NI keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Packets emitted.
    pub tx_packets: u64,
    /// Packets consumed by the receive path (good or rejected; not Busy).
    pub rx_packets: u64,
    /// Packets rejected.
    pub rx_rejected: u64,
    /// Headers whose single-bit error was corrected.
    pub hdr_corrected: u64,
    /// Mailbox messages refused because the mailbox was full.
    pub mb_full_nacks: u64,
    /// Messages this node re-queued after a nack.
    pub mb_retries: u64,
    /// Messages this node dropped after a final nack.
    pub mb_denied: u64,
    /// Bytes written to memory by accepted data packets.
    pub rx_data_bytes: u64,
    /// Payload bytes of emitted packets.
    pub tx_payload_bytes: u64,
    /// Read requests refused because the read queue was full.
    pub rd_busy_nacks: u64,
    /// Emitted packets whose payload read had a SLVERR beat (at their tail).
    pub rd_slverr: u64,
    /// Emitted packets whose payload read had a DECERR beat (at their tail).
    pub rd_decerr: u64,
    /// Landed data writes whose B was SLVERR.
    pub wr_slverr: u64,
    /// Landed data writes whose B was DECERR.
    pub wr_decerr: u64,
    /// Rejections by reason code (index = code; index 0 unused).
    pub rejected_by: [u64; RejectReason::MAX_CODE as usize + 1],
}

impl Counters {
    /// Counter `index` (the `cnt::*` constants).
    pub fn get(&self, index: usize) -> u64 {
        match index {
            cnt::TX_PACKETS => self.tx_packets,
            cnt::RX_PACKETS => self.rx_packets,
            cnt::RX_REJECTED => self.rx_rejected,
            cnt::HDR_CORRECTED => self.hdr_corrected,
            cnt::MB_FULL_NACKS => self.mb_full_nacks,
            cnt::MB_RETRIES => self.mb_retries,
            cnt::MB_DENIED => self.mb_denied,
            cnt::RX_DATA_BYTES => self.rx_data_bytes,
            cnt::TX_PAYLOAD_BYTES => self.tx_payload_bytes,
            cnt::RD_BUSY_NACKS => self.rd_busy_nacks,
            cnt::RD_SLVERR => self.rd_slverr,
            cnt::RD_DECERR => self.rd_decerr,
            cnt::WR_SLVERR => self.wr_slverr,
            cnt::WR_DECERR => self.wr_decerr,
            _ => 0,
        }
    }

    /// Rejections for `r`.
    pub fn rejected(&self, r: RejectReason) -> u64 {
        self.rejected_by[r.code() as usize]
    }
}
