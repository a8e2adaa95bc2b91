# Three-dimensional series with missing values ('?' and NaN), two classes.
@problemName Missing
@timeStamps false
@missing true
@univariate false
@dimensions 3
@equalLength false
@classLabel true up down
@data
1,2,3,4:10,?,30,40:100,200,300,NaN:up
5,6:50,60:500,600:down

# blank lines and comments between cases are allowed
?,1,2:?,1,2:?,1,2:up
