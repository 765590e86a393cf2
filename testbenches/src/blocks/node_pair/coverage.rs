//! What a run of the `node-pair` bench exercised ([`NodePairCoverage`])
//! and the latencies it measured ([`PairFigures`]).

/// What a run exercised; the integration test asserts on it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodePairCoverage {
    /// Doorbells accepted (RDMA writes), of those more than one packet, and bytes.
    pub rdma_writes: u64,
    pub multi_packet: u64,
    pub rdma_bytes: u64,
    /// Packetizer sends accepted.
    pub sends: u64,
    /// Doorbells and sends refused (SLVERR: queue or slots full).
    pub refused: u64,
    /// RDMA reads accepted (doorbells), and bytes asked for.
    pub rdma_reads: u64,
    pub read_bytes: u64,
    /// Packets compared at the NIs' outputs, by type: RdmaWrite, Mailbox,
    /// MailboxAck, MailboxNack, RdmaCompletion, RdmaReadReq, RdmaReadResp.
    pub tx_packets: [u64; 7],
    /// Flits compared (out of the NIs), packets delivered and checked
    /// against their flow.
    pub flits: u64,
    pub delivered: u64,
    /// Golden outcomes at `rx_commit`: accepted, refused (mailbox full),
    /// read requests refused (read queue full: Nack READ_BUSY).
    pub accepted: u64,
    pub refused_full: u64,
    pub refused_reads: u64,
    /// READ_DONE / REMOTE_DENIED / READ_BUSY completions software read
    /// (each read then posted again), and reads posted again (doorbell
    /// accepted).
    pub read_busy_seen: u64,
    pub read_reposts: u64,
    /// Class-1 packets decided while a class-0 packet delivered earlier
    /// awaited its decision (the class-0 one Busy, or not yet decided).
    pub class1_first: u64,
    /// Cycles some NI reported `rx_busy`; golden `Busy` confirmations;
    /// periods in which one node's software left its completion queue
    /// alone (so that it fills up).
    pub busy_cycles: u64,
    pub busy_checks: u64,
    pub cq_holds: u64,
    /// AXI4 write bursts compared.
    pub axi_writes: u64,
    /// Completions read and matched: WRITE_IN, READ_DONE, NOTIFY; mailbox
    /// messages read and matched.
    pub write_in: u64,
    pub read_done: u64,
    pub notify: u64,
    pub messages: u64,
    /// Drains completed (each with the byte-for-byte memory comparison).
    pub drains: u64,
    /// Reset pulses in the middle of traffic (packets in flight, AXI
    /// bursts open); the run goes on from the set-up. Drains completed
    /// after one (memories compared after the reset).
    pub mid_resets: u64,
    pub drains_after_reset: u64,
    /// RDMA writes accepted to an absent endpoint (the coordinates of a
    /// node, an fpga beyond its router's local ports), and their packets
    /// picked (each dropped by that node's router, counted).
    pub absent_writes: u64,
    pub absent_packets: u64,
    /// Accesses sent to be rejected (doorbell accepted): one-packet RDMA
    /// writes and RDMA reads to an address no window of the destination
    /// opens to the job (reason `Window` or `Pdid`); packets the golden
    /// NI rejected at `rx_commit` (each one of those, for its reason);
    /// error-queue entries software read (ERRQ_W0..W4, each the oldest
    /// due); READ_DONE / REMOTE_DENIED completions of the rejected reads.
    pub reject_writes: u64,
    pub reject_reads: u64,
    pub rejected: u64,
    pub errq_entries: u64,
    pub read_denied: u64,
    /// Error-queue overflows: bursts of more rejections at one node than
    /// its queue holds, software reading none until all were decided (then
    /// STATUS, with ERRQ_OVERFLOW, and a write clearing it); entries lost.
    pub errq_bursts: u64,
    pub errq_lost: u64,
    /// Receiver-stall episodes run (a node leaves its completion queue
    /// alone while the other fills the buffers towards it), and the most
    /// packets in flight towards the stalled node, per class (picked at
    /// the sender, not yet delivered).
    pub stalls: u64,
    pub stall_class0_peak: u64,
    pub stall_class1_peak: u64,
    /// Registers read back right after a mid-run reset pulse (each
    /// against the golden model's reset value).
    pub reset_readbacks: u64,
    /// Allreduce (NIs with the engine): collectives created; parts posted
    /// (DOORBELL accepted) and refused (posted again); completions read,
    /// each with its destination checked against the reference result
    /// (and the bytes checked); collectives whose every rank was checked,
    /// by rank count, op code and dtype code; of those, of one element,
    /// of more than one packet, above AR_THRESHOLD (reduce-scatter +
    /// allgather).
    pub ar_collectives: u64,
    pub ar_posted: u64,
    pub ar_refused: u64,
    /// Parts posted whose completion a reset pulse cut short.
    pub ar_lost: u64,
    pub ar_checked: u64,
    pub ar_bytes_checked: u64,
    pub ar_done: u64,
    pub ar_by_ranks: std::collections::BTreeMap<usize, u64>,
    pub ar_by_op: [u64; 6],
    pub ar_by_dtype: [u64; 6],
    pub ar_one_element: u64,
    pub ar_multi_packet: u64,
    pub ar_large_schedule: u64,
    /// Allreduce fragments picked (compared flit by flit in their flow)
    /// and accepted by their receiver; engine memory writes expected
    /// (bursts: steps, copies) and fragments' scratch writes.
    pub ar_fragments: u64,
    pub ar_frags_accepted: u64,
    pub ar_engine_bursts: u64,
    pub ar_scratch_bursts: u64,
}

/// Latency figures measured in the bench (cycles).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PairFigures {
    /// Isolated 64 B RDMA writes node 0 -> node 1: DOORBELL accepted on
    /// node 0 (cycle t0) to the WRITE_IN completion visible on node 1 (the
    /// cycle after the B response of its write, when CQ_COUNT reads
    /// non-zero): `t1 - t0`.
    pub write_64b: Vec<u64>,
    /// Isolated 16 B packetizer sends node 0 -> node 1: PKT_SEND accepted
    /// on node 0 to MB_COUNT non-zero on node 1 (the cycle after its
    /// `rx_commit` of the message).
    pub pkt_16b: Vec<u64>,
    /// Under load, every transfer: (sum, count, max) for last-packet
    /// completions of RDMA writes (any length) and mailbox messages.
    pub write_load: (u64, u64, u64),
    pub pkt_load: (u64, u64, u64),
}

impl PairFigures {
    /// One line.
    pub fn summary(&self) -> String {
        let s = |v: &[u64]| {
            if v.is_empty() {
                "n/a".to_string()
            } else {
                format!(
                    "min {} mean {:.1} max {} (n={})",
                    v.iter().min().unwrap_or(&0),
                    v.iter().sum::<u64>() as f64 / v.len() as f64,
                    v.iter().max().unwrap_or(&0),
                    v.len()
                )
            }
        };
        let l = |x: (u64, u64, u64)| {
            if x.1 == 0 {
                "n/a".to_string()
            } else {
                format!(
                    "mean {:.1} max {} (n={})",
                    x.0 as f64 / x.1 as f64,
                    x.2,
                    x.1
                )
            }
        };
        format!(
            "latency, cycles: 64 B RDMA write doorbell->completion (1 hop) {}; packetizer 16 B send->MB_COUNT {}; under load: write {}, packetizer {}",
            s(&self.write_64b),
            s(&self.pkt_16b),
            l(self.write_load),
            l(self.pkt_load)
        )
    }
}

/// Add sample `d` to a (sum, count, max) accumulator.
pub(super) fn record(acc: &mut (u64, u64, u64), d: u64) {
    acc.0 += d;
    acc.1 += 1;
    acc.2 = acc.2.max(d);
}
