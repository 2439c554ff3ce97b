"""Prints a function whose relu sits in DEPTH nested tg.fusion regions:
nested_fusion.py DEPTH. Tests that analyses are linear in the nesting."""
import sys
d=int(sys.argv[1])
lines=['func.func @main(%a: tensor<4xf32> {tg.role = "input", tg.name = "a"}) -> (tensor<4xf32> {tg.name = "y"}) {']
ind='  '
cur='%a'
for i in range(d):
    lines.append(f'{ind}%f{i} = tg.fusion ({cur}) : (tensor<4xf32>) -> tensor<4xf32> {{')
    lines.append(f'{ind}^bb0(%x{i}: tensor<4xf32>):')
    ind+='  '
    cur=f'%x{i}'
lines.append(f'{ind}%r = tg.relu {cur} : tensor<4xf32>')
inner='%r'
for i in reversed(range(d)):
    lines.append(f'{ind}tg.yield {inner} : tensor<4xf32>')
    ind=ind[:-2]
    lines.append(f'{ind}}}')
    inner=f'%f{i}'
lines.append(f'  return %f0 : tensor<4xf32>')
lines.append('}')
print('\n'.join(lines))
