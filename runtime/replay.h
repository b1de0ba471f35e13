/* replay.h - `dwc replay`: a trace through one authorizer. */
#ifndef DW_REPLAY_H
#define DW_REPLAY_H
int dw_cmd_replay(int argc, char **argv);
extern const char dw_replay_usage[];
#endif
