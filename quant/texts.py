"""Built-in texts: one for evaluation, a different one for importance-matrix calibration.

They are deliberately separate, so that an imatrix-guided precision is not
scored on the text it was calibrated on. Pass your own with --text/--calib.
"""

EVAL_TEXT = """\
The kettle clicked off just as the rain started again, and Mara carried two cups to the table by the window.
Her brother had promised to call before noon, but the phone stayed quiet while the street filled with umbrellas.
She opened the notebook where she kept the list of repairs: the hinge on the back door, the loose tile in the
bathroom, the bicycle chain that slipped whenever she climbed the hill toward the market. Each item had a date
beside it, and most of the dates were months old. Outside, a delivery van stopped with its hazard lights blinking,
and a man in a yellow jacket checked a parcel label against a screen on his wrist.
Weather stations along the coast reported gusts above sixty kilometres per hour during the night, and ferry
services between the two largest islands were suspended until further notice. Engineers inspected the bridge at
dawn and found no structural damage, although several signs had been torn from their posts. The regional council
said that schools would open as usual, but asked parents to allow extra time for the morning journey.
To convert a temperature from Celsius to Fahrenheit, multiply by nine, divide by five, and add thirty-two.
Water boils at one hundred degrees Celsius at sea level, which is two hundred and twelve degrees Fahrenheit.
At higher altitudes the boiling point drops, because the air pressure is lower; cooks in mountain towns often
adjust their recipes, adding a little more liquid and a few more minutes.
"Can you check whether the pharmacy on Elm Street is still open?" she asked, not looking up from the list.
"I think it closes at six on weekdays, but I am not sure about Saturdays."
The answer came a moment later: the pharmacy was open until four, and the nearest alternative was across the river.
She wrote the time on the back of her hand, finished her tea, and reached for her coat.
In the afternoon the clouds broke apart, and the light turned the wet roofs silver. Children raced paper boats
along the gutter while their parents talked under the awning of the bakery. Somewhere a radio was playing an old
song about a train that never arrived, and nobody seemed to mind that it repeated the same chorus four times.
"""

CALIB_TEXT = """\
Quarterly figures showed that shipments rose by eleven percent compared with the same period last year, driven
mostly by orders from hospitals and laboratories. The company expects supply constraints on two components to ease
by the end of the summer. Analysts asked about the new warehouse, and the finance director replied that it would
open in stages, starting with the cold-storage wing.
The museum's new exhibition brings together maps drawn by sailors, merchants and monks over six centuries.
Some are precise enough to navigate by; others place sea monsters where the cartographer had no information.
Visitors can compare the outline of the same coastline as it changed from one map to the next.
First, remove the four screws that hold the back panel. Lift the panel gently, because the ribbon cable is short.
Disconnect the battery before touching the board, then replace the fan and reconnect everything in reverse order.
If the fan does not spin when the machine starts, check that the connector is fully seated.
"Turn left at the second roundabout," the navigator said, "then keep right until you see the sign for the harbour."
They arrived just after the last boat had left, and spent the evening in a small restaurant that served only fish
caught that morning. The owner told them stories about storms, lighthouses and a cat that had crossed the strait
twice in a fishing crate. Numbers, dates and names: 1987, 2024, the third of March, Oslo, Nairobi, Valparaiso.
def area(radius): return 3.14159 * radius * radius  # a circle's area, to three decimal places
"""
