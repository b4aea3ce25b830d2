// loadgen's report: the one JSON line (fields: native-bench/README.md, "Output").
#ifndef LOADGEN_REPORT_H
#define LOADGEN_REPORT_H
#include "loadgen_run.h"

static void json_string(FILE *o, const char *s) {
  fputc('"', o);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', o);
    if ((unsigned char)*s < 0x20) continue;
    fputc(*s, o);
  }
  fputc('"', o);
}

/** What main measured around the run (the rest of the report is in the run's own counters). */
typedef struct {
  uint64_t requests_in_file;
  double slice_us_before; // --slice-us: the slice the thread had before (µs)
  int64_t cpu_us, cpu_user_us, cpu_sys_us; // connects + window + drain (getrusage)
  int64_t cpu_total_us;                    // the whole process, file load included
  int64_t voluntary_context_switches, involuntary_context_switches;
  int64_t end_ns; // the run's end (CLOCK_MONOTONIC)
  int64_t clock_realtime_minus_monotonic_ns;
} run_figures_t;

/** The run's one JSON line on stdout. */
static void report_json(const run_t *r, const run_figures_t *f) {
  FILE *o = stdout;
  double window_ms = (double)(r->t_end - r->t0) / 1e6;
  uint64_t answered = r->responses - r->unexpected_responses;
  fprintf(o, "{\"tool\":\"loadgen\",\"mode\":\"%s\",\"connections\":%d,\"requests_in_file\":%llu", r->o.open ? "open" : "closed", r->nlanes, (unsigned long long)f->requests_in_file);
  if (r->o.open) fprintf(o, ",\"rate_per_s\":%.3f,\"scheduled\":%llu", r->o.rate, (unsigned long long)r->open_next);
  fprintf(o, ",\"transport\":\"%s\"", r->o.ws ? "ws" : "http");
  if (r->o.ws)
    fprintf(o, ",\"ws_unexpected_frames\":%llu,\"ws_id_mismatches\":%llu,\"ws_pings_answered\":%llu,\"ws_pongs\":%llu,\"ws_closes\":%llu", (unsigned long long)r->ws_unexpected,
            (unsigned long long)r->ws_id_mismatches, (unsigned long long)r->ws_pings, (unsigned long long)r->ws_pongs, (unsigned long long)r->ws_closes);
  if (r->o.ws)
    fprintf(o, ",\"ws_lanes_per_connection\":%d,\"sockets\":%d,\"ws_writes\":%llu,\"ws_frames_written\":%llu", r->o.ws_lanes_per_conn, r->nconns,
            (unsigned long long)r->ws_writes, (unsigned long long)r->ws_frames_written);
  fprintf(o, ",\"tcp_congestion\":\"%s\",\"generator_io\":\"%s\"", r->o.tcp_congestion, r->use_uring ? "io_uring" : "epoll");
  if (r->io_fallback != NULL) fprintf(o, ",\"io_fallback\":\"%s\"", r->io_fallback);
  if (r->o.slice_us > 0) fprintf(o, ",\"slice_us\":%.0f,\"slice_us_before\":%.1f", r->o.slice_us, f->slice_us_before);
  fprintf(o, ",\"window_ms\":%.3f,\"run_ms\":%.3f,\"ended_early\":%s", window_ms, (double)(f->end_ns - r->t0) / 1e6, r->ended_early ? "true" : "false");
  fprintf(o, ",\"requests_sent\":%llu,\"responses\":%llu,\"unanswered\":%llu,\"not_sent\":%llu", (unsigned long long)r->sent_total, (unsigned long long)answered,
          (unsigned long long)r->unanswered, (unsigned long long)r->not_sent);
  fprintf(o, ",\"status_2xx\":%llu,\"status_4xx\":%llu,\"status_5xx\":%llu,\"status_other\":%llu", (unsigned long long)r->status_2xx, (unsigned long long)r->status_4xx,
          (unsigned long long)r->status_5xx, (unsigned long long)r->status_other);
  fprintf(o, ",\"socket_errors\":%llu,\"connections_closed\":%llu,\"protocol_errors\":%llu,\"unexpected_responses\":%llu", (unsigned long long)r->socket_errors,
          (unsigned long long)r->connections_closed, (unsigned long long)r->protocol_errors, (unsigned long long)r->unexpected_responses);
  fprintf(o, ",\"in_window\":{\"responses\":%llu,\"orders_ok\":%llu,\"cancels_ok\":%llu}", (unsigned long long)r->in_window_responses,
          (unsigned long long)r->in_window_orders_ok, (unsigned long long)r->in_window_cancels_ok);
  fputs(",\"kinds\":{", o);
  for (int k = 0; k < KINDS; k++) {
    const kind_stats_t *st = &r->stats[k];
    fprintf(o, "%s\"%s\":{\"sent\":%llu,\"ok\":%llu,\"with_fills\":%llu,\"rejects\":{", k ? "," : "", KIND_NAMES[k], (unsigned long long)st->sent,
            (unsigned long long)st->ok, (unsigned long long)st->with_fills);
    for (int i = 0; i < st->nrejects; i++) {
      if (i) fputc(',', o);
      json_string(o, st->rejects[i].code);
      fprintf(o, ":%llu", (unsigned long long)st->rejects[i].n);
    }
    if (st->rejects_other) fprintf(o, "%s\"OTHER_CODES\":%llu", st->nrejects ? "," : "", (unsigned long long)st->rejects_other);
    fputs("}}", o);
  }
  static const char *const hist_names[3] = {"latency", "service", "send_delay"};
  const hist_t *hists[3] = {&r->latency, &r->service, &r->send_delay};
  fputs("},\"latency_us\":{", o);
  for (int i = 0; i < 3; i++) {
    if (i) fputc(',', o);
    hist_json(o, hist_names[i], hists[i]);
  }
  if (r->o.open) {
    fputc(',', o);
    hist_json(o, "timer_late", &r->timer_late);
  }
  fputc('}', o);
  // spin_us: the early wake as it ran (--spin-us, capped at SPIN_INTERVAL_SHARE of the interval).
  if (r->o.open)
    fprintf(o, ",\"spin_us\":%.3f,\"spins\":%llu,\"spin_us_total\":%.1f", (double)r->spin_ns / 1e3, (unsigned long long)r->spins, (double)r->spin_ns_total / 1e3);
  fprintf(o, ",\"cpu_us\":%lld,\"cpu_user_us\":%lld,\"cpu_sys_us\":%lld,\"cpu_total_us\":%lld", (long long)f->cpu_us, (long long)f->cpu_user_us, (long long)f->cpu_sys_us,
          (long long)f->cpu_total_us);
  fprintf(o, ",\"first_send_ms\":%.3f,\"last_send_ms\":%.3f,\"early_sends\":%llu", r->first_send_ns ? (double)(r->first_send_ns - r->t0) / 1e6 : 0.0,
          r->last_send_ns ? (double)(r->last_send_ns - r->t0) / 1e6 : 0.0, (unsigned long long)r->early_sends);
  // io_uring: "epoll_waits" counts its waiting io_uring_enter calls and "epoll_events" its completions
  // (sends and timeouts included), so wake-ups per request read the same from either backend.
  fprintf(o, ",\"epoll_waits\":%llu,\"epoll_events\":%llu,\"reads\":%llu,\"read_bytes\":%llu", (unsigned long long)r->waits, (unsigned long long)r->wait_events,
          (unsigned long long)r->reads, (unsigned long long)r->read_bytes);
  if (r->use_uring)
    fprintf(o, ",\"io_uring_enters\":%llu,\"io_uring_recv_buffers\":%u,\"io_uring_recv_rearms\":%llu,\"io_uring_recv_nobufs\":%llu", (unsigned long long)r->u.enters,
            r->u.nbufs, (unsigned long long)r->uring_rearms, (unsigned long long)r->uring_nobufs);
  fprintf(o, ",\"voluntary_context_switches\":%lld,\"involuntary_context_switches\":%lld", (long long)f->voluntary_context_switches, (long long)f->involuntary_context_switches);
  if (r->o.records != NULL) fprintf(o, ",\"records\":%llu,\"clock_realtime_minus_monotonic_ns\":%lld", (unsigned long long)r->records.n, (long long)f->clock_realtime_minus_monotonic_ns);
  fprintf(o, ",\"generator_cpu_us_per_request\":%.3f", answered > 0 ? (double)f->cpu_us / (double)answered : 0.0);
  if (r->o.report_lanes) {
    fputs(",\"lane_sent\":[", o);
    for (int i = 0; i < r->nlanes; i++) fprintf(o, "%s%llu", i ? "," : "", (unsigned long long)(r->cold[i].n - r->lanes[i].left));
    fputc(']', o);
  }
  if (r->o.histograms) {
    fputs(",\"histograms\":{", o);
    for (int i = 0; i < 3; i++) {
      if (i) fputc(',', o);
      hist_buckets_json(o, hist_names[i], hists[i]);
    }
    fputc('}', o);
  }
  fputs("}\n", o);
  fflush(o);
}

#endif
