//! [`NiCoverage`]: what a run of the `ni` bench exercised.

use exanet_sim::ni::RejectReason;

/// What a run exercised; the integration test asserts on it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NiCoverage {
    /// Packets compared, by type: RDMA write, read request, mailbox.
    pub writes: u64,
    pub read_reqs: u64,
    pub messages: u64,
    /// Flits compared.
    pub flits: u64,
    /// AR bursts, and packets read as two bursts (4 KiB crossing).
    pub bursts: u64,
    pub split_reads: u64,
    /// AXI4-Lite writes and reads compared; of those answered SLVERR.
    pub axil_writes: u64,
    pub axil_reads: u64,
    pub slverr: u64,
    /// Allreduce descriptors posted (all malformed); software actions
    /// dropped because a DOORBELL in them would start a collective (the
    /// RTL runs none yet); allreduce completions by `ArStatus` code, as
    /// the golden model will post them.
    pub ar_descriptors: u64,
    pub ar_kept_out: u64,
    pub ar_status: [u64; 8],
    /// Allreduce DOORBELLs queued behind a running collective (in the
    /// golden model; the RTL's descriptor queue).
    pub ar_queued: u64,
    /// Collectives ended OK whose last step the RTL wrote AR_TIMEOUT
    /// cycles or more after the golden event that ended them (the
    /// timeout fell meanwhile: OK must still win).
    pub ar_ok_past_timeout: u64,
    /// Single-rank allreduces copied (source to destination over AXI4,
    /// compared burst by burst with the golden engine's writes): count,
    /// bytes, write bursts (a chunk crossing a 4 KiB page is two).
    pub ar_copies: u64,
    /// Good single-rank descriptors generated (some are changed by random
    /// configuration writes before they run).
    pub ar_good_descriptors: u64,
    pub ar_copy_bytes: u64,
    pub ar_copy_bursts: u64,
    /// Chunks of `max_payload_bytes` the copies wrote (the golden
    /// engine's writes: one per chunk; more bursts than chunks means
    /// chunks split at a 4 KiB page).
    pub ar_copy_chunks: u64,
    /// Collectives of two ranks or more started (good descriptors on slot
    /// 0, whose box holds this node and up to 31 others); their fragments
    /// picked (each compared flit by flit with the golden engine's); the
    /// collectives ended TIMEOUT (no partner answers in this bench).
    pub ar_collectives: u64,
    pub ar_fragments: u64,
    pub ar_timeouts: u64,
    /// CQ_COUNT reads software queued in the last cycles before a
    /// collective's timeout.
    pub ar_timeout_polls: u64,
    /// Allreduce fragments sent into the receive path; those the engine
    /// accepted (and of them the ones closing a step), their scratch
    /// write bursts, and those it rejected by `FragReject` code.
    pub ar_frags_sent_in: u64,
    pub ar_frags_accepted: u64,
    pub ar_frags_closing: u64,
    pub ar_frag_bursts: u64,
    pub ar_frag_rejected: [u64; 10],
    /// Partner fragments of slot 0's running collective sent in (the
    /// partners' exact fragments, golden `partner_fragments`); steps
    /// combined or stored (golden writes at a pick or a decision) and
    /// their write bursts; collectives that ended OK after combining, by
    /// op code and by dtype code.
    pub ar_partner_frags: u64,
    pub ar_steps_done: u64,
    pub ar_step_bursts: u64,
    pub ar_combined_ok: u64,
    pub ar_combined_op: [u64; 8],
    pub ar_combined_dtype: [u64; 8],
    /// Of those, float sums (`fp_add` in `reduce_alu`).
    pub ar_combined_fsum: u64,
    /// Doorbells and sends refused (SLVERR).
    pub refused_doorbells: u64,
    pub refused_sends: u64,
    /// Reset pulses; registers read back right after a reset pulse in the
    /// middle of the run (before the set-up writes them).
    pub resets: u64,
    pub reset_readbacks: u64,
    /// Cycles the flit output was stalled by credits (request VC); cycles
    /// the response VC had no credit left.
    pub credit_stalls: u64,
    pub resp_credit_out: u64,
    /// Packets injected into the receive path and decided.
    pub rx_packets: u64,
    /// Of those: accepted; accepted after a corrected header error.
    pub rx_accepted: u64,
    pub rx_corrected: u64,
    /// Rejected, by reason code (index 1..=`RejectReason::MAX_CODE`;
    /// WrongClass among them).
    pub rx_rejected: [u64; RejectReason::MAX_CODE as usize + 1],
    /// Header upsets sent in: single bits flipped (each to be corrected),
    /// the set of bit positions they flipped (bit `i` set: header bit `i`
    /// was flipped at least once), and double errors (rejected HeaderEcc
    /// when nothing before that check rejects them).
    pub hdr_flips: u64,
    pub hdr_flip_bits: u128,
    pub hdr_doubles: u64,
    /// Packets decided per class of their arrival VC (0, 1); of the
    /// class-1 decisions, those made while an older class-0 packet was
    /// undecided (out of arrival order), and those made while a class-0
    /// packet found Busy was waiting (it yielded).
    pub rx_by_class: [u64; 2],
    pub class1_overtakes: u64,
    pub class1_past_busy: u64,
    /// Packets the agent sent on a VC of the other class than their type's.
    pub wrong_class_sent: u64,
    /// AXI4 write bursts compared against the golden writes, and bytes.
    pub rx_writes: u64,
    pub rx_write_bytes: u64,
    /// ERRQ_W* reads compared with a non-zero value; ERRQ pops accepted.
    pub errq_words: u64,
    pub errq_pops: u64,
    /// Responses the NI emitted (compared flit by flit, on `resp_vc`):
    /// MailboxAck, MailboxNack, RdmaCompletion, Nack; of the Nacks, those
    /// refusing a read because the read queue was full (NACK_READ_BUSY).
    pub resp_acks: u64,
    pub resp_mb_nacks: u64,
    pub resp_completions: u64,
    pub resp_read_nacks: u64,
    pub resp_read_busy: u64,
    /// RdmaReadResp packets the read-serve engine emitted (compared flit
    /// by flit), and read requests accepted (each a read job).
    pub read_resps: u64,
    pub read_jobs: u64,
    /// Read requests decided (accepted, refused or rejected), and those
    /// refused because the read queue was full (outcome Refused, answered
    /// Nack READ_BUSY; a read request is never Busy for the read queue).
    pub read_reqs_in: u64,
    pub read_refused: u64,
    /// Accepted data packets (each must be one AXI4 write burst), and of
    /// those with `last = 1` (a completion posted).
    pub rx_data: u64,
    pub rx_completions: u64,
    /// Mailbox messages received: queued; refused because the mailbox was full.
    pub mb_queued: u64,
    pub mb_refused: u64,
    /// Acknowledgements of the NI's own messages accepted: delivered
    /// (slot freed), retried (queued again), denied.
    pub acks_delivered: u64,
    pub acks_retried: u64,
    pub acks_denied: u64,
    /// RdmaCompletion and Nack packets accepted (NOTIFY / REMOTE_DENIED entries).
    pub notify_in: u64,
    pub nack_in: u64,
    /// Cycles the receive path reported Busy; golden `Busy` confirmations.
    pub busy_cycles: u64,
    pub busy_checks: u64,
    /// Completion statuses seen, by code: entries read (CQ_W0 != 0) and
    /// RdmaCompletion responses; CQ pops of an entry.
    pub cq_status: [u64; 4],
    pub cq_pops: u64,
    /// MB_DATA words read non-zero; MB pops of a message.
    pub mb_words: u64,
    pub mb_pops: u64,
    /// STATUS reads with a sticky bit set; STATUS W1C writes.
    pub status_sticky: u64,
    pub status_clears: u64,
    /// Phases that ended without a reset pulse.
    pub phases_no_reset: u64,
    /// B responses taken (each the golden model's `write_landed`); reads
    /// of CQ_COUNT, CQ_W0 or STATUS accepted while a completion's write was
    /// still landing (the completion must not be visible yet).
    pub landed: u64,
    pub cq_reads_landing: u64,
    /// Acknowledgements sent while the message they name was still being
    /// sent (tail not out): decided `Stale`, the slot untouched.
    pub acks_while_sending: u64,
    /// Many-to-one burst ([`NiBench::set_mailbox_burst`]): messages created
    /// by the senders, delivered to software (read and popped), answered
    /// MailboxNack (full), delivered twice (must stay 0), answered with
    /// anything else (must stay 0).
    ///
    /// [`NiBench::set_mailbox_burst`]: super::NiBench::set_mailbox_burst
    pub burst_created: u64,
    pub burst_delivered: u64,
    pub burst_nacks: u64,
    pub burst_dups: u64,
    pub burst_other: u64,
    /// Event trace: ring entries read and compared at phase ends, by event
    /// code (index = `exanet_sim::ni::trace::EventCode` value); readouts
    /// of a ring that had wrapped; phases with the trace disabled.
    pub trace_events: [u64; 16],
    pub trace_wrapped: u64,
    pub trace_off_phases: u64,
    /// AXI4 error responses injected ([`NiBench::set_axi_faults`]): read
    /// beats taken with RRESP SLVERR / DECERR; data B responses taken with
    /// BRESP SLVERR / DECERR.
    ///
    /// [`NiBench::set_axi_faults`]: super::NiBench::set_axi_faults
    pub axi_r_errors: u64,
    pub axi_b_errors: u64,
}
