//! Parameters of the network interface, with the checks that make every
//! register field and packet field they size fit.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Payload sizes the NI supports (bytes per packet, a power of two so that
/// "up to the next boundary" segmentation is a mask).
pub const MAX_PAYLOAD_CHOICES: [usize; 5] = [16, 32, 64, 128, 256];

/// Parameters of `ni`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NiParams {
    /// User channels (each with its own register page, PDID, descriptor queue
    /// and packetizer window): 1..=16.
    pub channels: usize,
    /// Descriptors a channel holds, the one in progress included: 1..=1024.
    pub desc_queue_depth: usize,
    /// Packetizer messages a channel keeps until acknowledged: 1..=64 (the
    /// NI-wide slot number, at most 16 * 64, is the message's 14-bit txid).
    pub pkt_slots: usize,
    /// Largest packetizer message in bytes: a multiple of 16 in
    /// 16..=`max_payload_bytes` (default 64: one Cortex-A53 cache line).
    pub mailbox_msg_bytes: usize,
    /// Largest payload per packet in bytes: 16, 32, 64, 128 or 256.
    pub max_payload_bytes: usize,
    /// Width of a memory address (AXI4 master address): 32..=42.
    pub addr_bits: u32,
    /// Receive windows (base, size, PDID): 1..=16.
    pub windows: usize,
    /// Error-queue entries: 1..=4096.
    pub errq_depth: usize,
    /// Messages the receive mailbox holds: 1..=4096.
    pub mailbox_depth: usize,
    /// Completion-queue entries: 1..=4096.
    pub cq_depth: usize,
    /// Response packets (acks, nacks, notifications) waiting to leave: 1..=255.
    pub resp_queue_depth: usize,
    /// RDMA read requests the node serves, the one in progress included: 1..=255.
    pub read_queue_depth: usize,
    /// Transfers the receive path can remember as damaged: 1..=64.
    pub poison_depth: usize,
    /// Communicator slots of the allreduce engine: 0..=16; 0 = no engine
    /// (allreduce descriptors refused BAD_OP, fragments rejected
    /// UNSUPPORTED). `exanet generate` takes only 0: the NI RTL's engine
    /// runs descriptor checks and single-rank copies (`exanet cosim
    /// allreduce`), not yet a collective of two ranks or more.
    pub ar_communicators: usize,
    /// Allreduce descriptors queued NI-wide: 1..=64.
    pub ar_queue_depth: usize,
    /// Largest allreduce vector in bytes: 8..=2^24 (the element count
    /// register is the descriptor's 32-bit LEN).
    pub ar_max_vector_bytes: usize,
    /// Torus dimensions (the engine maps ranks to coordinates modulo
    /// them): each 1..=16. Text form `8x4x4`.
    #[serde(with = "crate::topology::dims_text")]
    pub torus_dims: [usize; 3],
    /// Entries of the event trace ring ([`super::trace`]): 0 (no trace
    /// hardware) or a power of two in 4..=4096.
    pub trace_depth: usize,
}

impl Default for NiParams {
    fn default() -> Self {
        NiParams {
            channels: 4,
            desc_queue_depth: 16,
            pkt_slots: 4,
            mailbox_depth: 16,
            mailbox_msg_bytes: 64,
            cq_depth: 64,
            resp_queue_depth: 8,
            read_queue_depth: 4,
            errq_depth: 16,
            poison_depth: 4,
            windows: 8,
            max_payload_bytes: 256,
            addr_bits: 40,
            ar_communicators: 0,
            ar_queue_depth: 8,
            ar_max_vector_bytes: 1 << 20,
            torus_dims: [8, 4, 4],
            trace_depth: 32,
        }
    }
}

fn range(key: &str, v: usize, lo: usize, hi: usize, why: &str) -> Result<()> {
    if v < lo || v > hi {
        bail!("ni.{key} = {v}: must be in {lo}..={hi} ({why})");
    }
    Ok(())
}

impl NiParams {
    /// Reject values that do not fit their register or packet fields,
    /// naming the key, the value and the rule.
    pub fn validate(&self) -> Result<()> {
        range(
            "channels",
            self.channels,
            1,
            16,
            "one 4 KiB register page each",
        )?;
        range(
            "desc_queue_depth",
            self.desc_queue_depth,
            1,
            1024,
            "CH_STATUS free-slot field",
        )?;
        range(
            "pkt_slots",
            self.pkt_slots,
            1,
            64,
            "CH_STATUS free-slot field",
        )?;
        range(
            "mailbox_depth",
            self.mailbox_depth,
            1,
            4096,
            "PARAMS1 field",
        )?;
        if !MAX_PAYLOAD_CHOICES.contains(&self.max_payload_bytes) {
            bail!(
                "ni.max_payload_bytes = {}: must be one of {:?} (a power of two up to 16 payload flits)",
                self.max_payload_bytes,
                MAX_PAYLOAD_CHOICES
            );
        }
        if !self.mailbox_msg_bytes.is_multiple_of(16)
            || self.mailbox_msg_bytes < 16
            || self.mailbox_msg_bytes > self.max_payload_bytes
        {
            bail!(
                "ni.mailbox_msg_bytes = {}: must be a multiple of 16 in 16..={} (one packet of at most max_payload_bytes)",
                self.mailbox_msg_bytes,
                self.max_payload_bytes
            );
        }
        range("cq_depth", self.cq_depth, 1, 4096, "PARAMS1 field")?;
        range(
            "resp_queue_depth",
            self.resp_queue_depth,
            1,
            255,
            "PARAMS3 byte",
        )?;
        range(
            "read_queue_depth",
            self.read_queue_depth,
            1,
            255,
            "PARAMS3 byte",
        )?;
        range("errq_depth", self.errq_depth, 1, 4096, "PARAMS2 field")?;
        range(
            "poison_depth",
            self.poison_depth,
            1,
            64,
            "a small associative table",
        )?;
        range(
            "windows",
            self.windows,
            1,
            16,
            "window registers 0x200..0x400",
        )?;
        if !(32..=42).contains(&self.addr_bits) {
            bail!(
                "ni.addr_bits = {}: must be in 32..=42 (42 is the header's address field)",
                self.addr_bits
            );
        }
        range(
            "ar_communicators",
            self.ar_communicators,
            0,
            16,
            "4-bit communicator id in a fragment's footer",
        )?;
        range(
            "ar_queue_depth",
            self.ar_queue_depth,
            1,
            64,
            "a small descriptor FIFO",
        )?;
        range(
            "ar_max_vector_bytes",
            self.ar_max_vector_bytes,
            8,
            1 << 24,
            "scratch offsets fit a fragment's address field",
        )?;
        super::trace::check_depth(self.trace_depth)?;
        if self.torus_dims.iter().any(|&d| !(1..=16).contains(&d)) {
            bail!(
                "ni.torus_dims = {:?}: each must be in 1..=16 (4-bit coordinates)",
                self.torus_dims
            );
        }
        Ok(())
    }

    /// The allreduce engine's parameters, when the NI has one.
    pub fn engine(&self) -> Option<crate::allreduce::engine::EngineParams> {
        (self.ar_communicators > 0).then_some(crate::allreduce::engine::EngineParams {
            communicators: self.ar_communicators,
            queue_depth: self.ar_queue_depth,
            max_payload_bytes: self.max_payload_bytes,
            max_vector_bytes: self.ar_max_vector_bytes,
            addr_bits: self.addr_bits,
            dims: self.torus_dims,
        })
    }

    /// One past the largest memory address.
    pub fn mem_limit(&self) -> u64 {
        1u64 << self.addr_bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid_and_errors_name_key_value_rule() {
        NiParams::default().validate().unwrap();
        let cases: Vec<(NiParams, &str)> = vec![
            (
                NiParams {
                    channels: 0,
                    ..Default::default()
                },
                "ni.channels = 0",
            ),
            (
                NiParams {
                    channels: 17,
                    ..Default::default()
                },
                "ni.channels = 17",
            ),
            (
                NiParams {
                    max_payload_bytes: 48,
                    ..Default::default()
                },
                "ni.max_payload_bytes = 48",
            ),
            (
                NiParams {
                    mailbox_msg_bytes: 72,
                    ..Default::default()
                },
                "ni.mailbox_msg_bytes = 72",
            ),
            (
                NiParams {
                    max_payload_bytes: 32,
                    mailbox_msg_bytes: 64,
                    ..Default::default()
                },
                "ni.mailbox_msg_bytes = 64",
            ),
            (
                NiParams {
                    pkt_slots: 65,
                    ..Default::default()
                },
                "ni.pkt_slots = 65",
            ),
            (
                NiParams {
                    addr_bits: 43,
                    ..Default::default()
                },
                "ni.addr_bits = 43",
            ),
            (
                NiParams {
                    windows: 0,
                    ..Default::default()
                },
                "ni.windows = 0",
            ),
            (
                NiParams {
                    resp_queue_depth: 256,
                    ..Default::default()
                },
                "ni.resp_queue_depth = 256",
            ),
            (
                NiParams {
                    ar_communicators: 17,
                    ..Default::default()
                },
                "ni.ar_communicators = 17",
            ),
            (
                NiParams {
                    ar_queue_depth: 0,
                    ..Default::default()
                },
                "ni.ar_queue_depth = 0",
            ),
            (
                NiParams {
                    ar_max_vector_bytes: 4,
                    ..Default::default()
                },
                "ni.ar_max_vector_bytes = 4",
            ),
            (
                NiParams {
                    trace_depth: 48,
                    ..Default::default()
                },
                "ni.trace_depth = 48",
            ),
            (
                NiParams {
                    torus_dims: [8, 17, 1],
                    ..Default::default()
                },
                "ni.torus_dims = [8, 17, 1]",
            ),
        ];
        for (p, want) in cases {
            let e = p.validate().unwrap_err().to_string();
            assert!(e.contains(want) && e.contains("must"), "{e}");
        }
    }

    #[test]
    fn serde_rejects_unknown_keys() {
        let j = serde_json::to_string(&NiParams::default()).unwrap();
        let back: NiParams = serde_json::from_str(&j).unwrap();
        assert_eq!(back, NiParams::default());
        let bad = j.replace("\"windows\"", "\"windowz\"");
        assert!(serde_json::from_str::<NiParams>(&bad).is_err());
    }
}
