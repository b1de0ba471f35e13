#!/usr/bin/env python3
"""A Box policy shaped like Box's shipped examples (shared/examples/box), for
`dwc check --schema box`: eight kinds of rule in rotation, rule n (0-based) of
kind n % 8:

  0 permit fs:read        path like "~/project/<n>/*"
  1 permit fs:write,move  path like "~/project/out<n>/*"
  2 forbid fs:read        path like "*/secret<n>/.env" && operation == read_content
  3 permit net:connect    host == "host<n>.example.com" && port == 443
  4 forbid net:connect    has ip && ip like "169.254.<n % 256>.*"
                          (repeats every 256 rules: true redundancies)
  5 permit http:request   host == "api<n>.example.com" && method == "GET"
  6 permit shell:exec     ["ls", "cat", "tool<n>"].contains(program)
  7 forbid shell:exec,spawn  program == "rm<n>" && has arg1 && arg1 == "-rf"

    tests/bench/gen_box_shaped.py N > policy.dw      (issue 21's set: N = 999)
"""
import sys

KINDS = [
    ('permit', '[Box::Action::"fs:read"]', 'context.input.path like "~/project/{n}/*"'),
    ('permit', '[Box::Action::"fs:write", Box::Action::"fs:move"]', 'context.input.path like "~/project/out{n}/*"'),
    ('forbid', '[Box::Action::"fs:read"]',
     'context.input.path like "*/secret{n}/.env" &&\n  context.input.operation == Box::FsReadOperation::"read_content"'),
    ('permit', '[Box::Action::"net:connect"]', 'context.input.host == "host{n}.example.com" && context.input.port == 443'),
    ('forbid', '[Box::Action::"net:connect"]', 'context.input has ip && context.input.ip like "169.254.{m}.*"'),
    ('permit', '[Box::Action::"http:request"]', 'context.input.host == "api{n}.example.com" && context.input.method == "GET"'),
    ('permit', '[Box::Action::"shell:exec"]', '["ls", "cat", "tool{n}"].contains(context.input.program)'),
    ('forbid', '[Box::Action::"shell:exec", Box::Action::"shell:spawn"]',
     'context.input.program == "rm{n}" &&\n  context.input has arg1 &&\n  context.input.arg1 == "-rf"'),
]


def main():
    n_rules = int(sys.argv[1]) if len(sys.argv) > 1 else 999
    out = []
    for n in range(n_rules):
        effect, actions, cond = KINDS[n % len(KINDS)]
        out.append('@id("r{n}")\n{e} (principal, action in {a}, resource)\nwhen {{\n  {c}\n}};\n'
                   .format(n=n, e=effect, a=actions, c=cond.format(n=n, m=n % 256)))
    sys.stdout.write('\n'.join(out))


if __name__ == '__main__':
    main()
